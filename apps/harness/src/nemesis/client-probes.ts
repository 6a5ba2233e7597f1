import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import type { EffectQuery, Observation } from '@fencekit/cluster';
import { sleep } from '../workloads/util.js';
import type { LinkCount } from './aimed-links.js';
import type { ObservedPhase } from './observation.js';
import { socketInodes, socketInodesAsync } from './proc-sockets.js';

/*
 * Independent probes of the faults the harness applies itself (#20): a client process stopped and continued
 * (pause-client, stall-holder), the client links reset (suspend), and the memory backend's own server process
 * (pause-server, kill, flicker, hang-at-close). Each reads the operating system's view (/proc process state,
 * the clients' TCP sockets, a connection to the server's socket), never the fault's own bookkeeping: that a
 * kill() returned says nothing about the process.
 */

/** One reading: is the fault's effect there, and what was read. */
interface Look {
  effect: boolean;
  detail: string;
}

/** The state letter of `pid` from /proc/<pid>/stat (R, S, D, T, t, Z…), or undefined when there is none. */
export function processState(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const at = stat.lastIndexOf(')');
    return stat.slice(at + 2, at + 3) || undefined;
  } catch {
    return undefined;
  }
}

const stoppedState = (state: string | undefined) => state === 'T' || state === 't';

/**
 * Reads `look` every `intervalMs` until it shows the phase's state (the effect after a start, its absence after
 * a heal) or `timeoutMs` passes; `atMs` is when the reading that decided it was taken, from `startedAt`
 * (performance.now() of the run's start).
 */
export async function pollPhase(
  look: () => Look | Promise<Look>,
  phase: EffectQuery['phase'],
  timeoutMs: number,
  startedAt: number,
  intervalMs = 20,
): Promise<ObservedPhase> {
  const wanted = phase === 'started';
  const called = performance.now();
  // At least two readings, the last one past the bound: a first one slowed by a loaded machine must not be all.
  for (let looks = 1; ; looks++) {
    const at = performance.now();
    const seen = await Promise.resolve()
      .then(look)
      .catch((error: Error) => ({ effect: !wanted, detail: `probe failed: ${error.message}` }));
    if (seen.effect === wanted) return { seen: true, detail: seen.detail, atMs: Math.round(at - startedAt) };
    const spent = performance.now() - called;
    if (spent >= timeoutMs && looks >= 2)
      return { seen: false, detail: seen.detail, atMs: Math.round(at - startedAt) };
    await sleep(Math.max(0, Math.min(intervalMs, timeoutMs - spent)));
  }
}

/**
 * A client process stopped (SIGSTOP): started when /proc shows it in state T, healed when it is not (or has
 * exited). Without a process id nothing can be read, which is recorded as not seen.
 */
export function observeClientStop(
  pid: number | undefined,
  phase: EffectQuery['phase'],
  timeoutMs: number,
  startedAt: number,
): Promise<ObservedPhase> {
  if (pid === undefined) {
    return Promise.resolve({
      seen: false,
      detail: 'no client process id to probe',
      atMs: Math.round(performance.now() - startedAt),
    });
  }
  return pollPhase(
    () => {
      const state = processState(pid);
      return {
        effect: stoppedState(state),
        detail: `client process ${pid} ${state === undefined ? 'gone' : `state ${state}`}`,
      };
    },
    phase,
    timeoutMs,
    startedAt,
  );
}

const TCP_TABLES = ['/proc/self/net/tcp', '/proc/self/net/tcp6'];

/**
 * The inodes of the established TCP connections towards any of `ports` in our network namespace (the clients'
 * too: they are our children), from the kernel's tables: one read of each, whatever the number of clients.
 */
function establishedTo(tables: readonly string[], ports: ReadonlySet<number>): Set<string> {
  const found = new Set<string>();
  for (const text of tables) {
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const remote = fields[2]!;
      const port = Number.parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16);
      // 01: ESTABLISHED
      if (fields[3] === '01' && ports.has(port)) found.add(fields[9]!);
    }
  }
  return found;
}

const readTablesSync = () =>
  TCP_TABLES.map((path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  });

/** Read without blocking: the fault proxy may run in this process, and its resets must not wait for us. */
const readTables = () => Promise.all(TCP_TABLES.map((path) => readFile(path, 'utf8').catch(() => '')));

/** The inodes of the TCP connections `pid` has open to any of `ports` (established). */
export function tcpConnections(pid: number, ports: ReadonlySet<number>): Set<string> {
  const open = establishedTo(readTablesSync(), ports);
  return new Set([...socketInodes(pid)].filter((inode) => open.has(inode)));
}

/** The ports of client-facing endpoints ('host:port'); a socket path has none. */
export function endpointPorts(endpoints: readonly string[]): Set<number> {
  const ports = new Set<number>();
  for (const endpoint of endpoints) {
    const port = Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
    if (Number.isInteger(port) && port > 0) ports.add(port);
  }
  return ports;
}

/** Every client's connections to the servers, by process id: what a reset must cut. */
export function clientLinks(
  pids: readonly (number | undefined)[],
  ports: ReadonlySet<number>,
): Map<number, Set<string>> {
  const open = establishedTo(readTablesSync(), ports);
  const links = new Map<number, Set<string>>();
  for (const pid of pids) {
    if (pid !== undefined) links.set(pid, new Set([...socketInodes(pid)].filter((inode) => open.has(inode))));
  }
  return links;
}

/**
 * The clients' links reset (suspend): started when none of the connections the clients had open at the reset
 * (`before`) is still established (where they had none, when a new request through each node's proxy gets no
 * answer: the cluster's own `cutClients` probe, whose reading is reported either way); healed when a request
 * through each proxy is answered again.
 */
export async function observeLinksReset(
  observe: ((query: EffectQuery) => Promise<Observation>) | undefined,
  nodes: readonly string[],
  before: ReadonlyMap<number, ReadonlySet<string>> | undefined,
  ports: ReadonlySet<number>,
  phase: EffectQuery['phase'],
  timeoutMs: number,
  startedAt: number,
): Promise<ObservedPhase> {
  const called = performance.now();
  const bound = Math.max(500, Math.round(timeoutMs));
  const perNode = nodes.map(async (node): Promise<ObservedPhase> => {
    if (!observe) return { seen: false, detail: 'no probe on this deployment', atMs: 0 };
    const o = await observe({ fault: 'cutClients', node, phase, timeoutMs: bound }).catch((error: Error) => ({
      seen: false,
      detail: `probe failed: ${error.message}`,
      afterMs: 0,
    }));
    return { seen: o.seen, detail: `${node}: ${o.detail}`, atMs: Math.round(called + o.afterMs - startedAt) };
  });
  const links =
    phase === 'started' && before
      ? pollPhase(
          async () => {
            // An inode is unique while its socket lives: still in the table as established, still open.
            const now = establishedTo(await readTables(), ports);
            const open = [...before.values()].reduce(
              (n, inodes) => n + [...inodes].filter((inode) => now.has(inode)).length,
              0,
            );
            const had = [...before.values()].reduce((n, s) => n + s.size, 0);
            return {
              effect: open === 0,
              detail:
                had === 0
                  ? 'no client connection to the servers was open at the reset'
                  : `${had - open} of the ${had} client connections open at the reset are gone`,
            };
          },
          phase,
          bound,
          startedAt,
        )
      : undefined;
  const requests = await Promise.all(perNode);
  const cut = await links;
  // The clients' own connections, cut at the reset, are the effect itself; a new request through each proxy is
  // the evidence where there were none to watch (and after a heal). A short outage may heal before a request
  // on a loaded machine gets its answer, which says nothing against connections seen cut.
  const decisive =
    cut && !cut.detail.startsWith('no client connection') ? [cut] : [...requests, ...(cut ? [cut] : [])];
  const all = [...requests, ...(cut ? [cut] : [])];
  return {
    seen: decisive.length > 0 && decisive.every((p) => p.seen),
    detail: all.map((p) => p.detail).join('; '),
    atMs: Math.max(...decisive.map((p) => p.atMs)),
  };
}

/** Whether a connection to a Unix socket (or host:port) is accepted within `timeoutMs`. */
function connects(path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The memory backend's server process (one node, a Unix socket): `pause` is /proc state T; `kill` is the
 * process killed last gone (or a zombie) and the socket refusing connections, healed when a live process
 * accepts them again. `pids()` gives the process running now and the one started before it.
 */
export async function observeLocalServer(
  query: EffectQuery,
  pids: () => { current: number | undefined; last: number | undefined },
  socketPath: string,
): Promise<Observation> {
  const started = performance.now();
  const timeoutMs = query.timeoutMs ?? 5_000;
  const look = async (): Promise<Look> => {
    const { current, last } = pids();
    if (query.fault === 'pause') {
      const state = processState(current ?? last);
      return {
        effect: stoppedState(state),
        detail: `server process ${state === undefined ? 'gone' : `state ${state}`}`,
      };
    }
    if (query.fault !== 'kill')
      return { effect: query.phase !== 'started', detail: `no probe for ${query.fault}` };
    const state = processState(query.phase === 'started' ? last : (current ?? last));
    const alive = state !== undefined && state !== 'Z';
    const serves = alive && (await connects(socketPath, 500));
    return {
      effect: !serves,
      detail: `server process ${state === undefined ? 'gone' : `state ${state}`}, ${serves ? 'accepts connections' : 'does not accept connections'}`,
    };
  };
  const seen = await pollPhase(look, query.phase, timeoutMs, started, 50);
  return { seen: seen.seen, detail: seen.detail, afterMs: seen.atMs };
}

/**
 * Several probes of one fault in one phase (each server it acted on, or its parts: the links slowed and the
 * client stopped): seen only when every one saw it; stamped when the last of them did (or gave up). Parts with
 * no reading (undefined) count as unseen, so a fault that skipped one of its probes cannot pass for observed.
 */
export function allSeen(
  phases: readonly (ObservedPhase | undefined)[],
  labels: readonly string[] = [],
): ObservedPhase | undefined {
  if (phases.length === 0) return undefined;
  const known = phases.filter((p): p is ObservedPhase => p !== undefined);
  const detail = phases.map((p, i) => {
    const label = labels[i] ? `${labels[i]}: ` : '';
    return `${label}${p ? p.detail : 'not probed'}`;
  });
  return {
    seen: known.length === phases.length && known.every((p) => p.seen),
    detail: detail.join('; '),
    atMs: known.length === 0 ? 0 : Math.max(...known.map((p) => p.atMs)),
  };
}

/**
 * cut-holder's start: the holder's links received nothing for `quietMs` although it sent on them (the kernel's
 * byte counts, as `silenced` reads them). Links that carried nothing either way show an idle client, not a
 * cut: its own request meeting no answer tells them apart, so an idle stretch is not taken for the effect.
 */
export function cutShown(
  now: ReadonlyMap<string, LinkCount>,
  before: ReadonlyMap<string, LinkCount>,
  sinceMs: number,
  quietMs: number,
): { effect: boolean; detail: string } {
  let sent = 0;
  let received = 0;
  for (const [local, count] of now) {
    const was = before.get(local) ?? { sent: 0, received: 0 };
    sent += Math.max(0, count.sent - was.sent);
    received += Math.max(0, count.received - was.received);
  }
  const detail = `in ${sinceMs} ms the client's ${now.size} links to the servers sent ${sent} bytes and received ${received}`;
  if (sent === 0) return { effect: false, detail: `${detail}: nothing asked, nothing to tell` };
  return { effect: received === 0 && sinceMs >= quietMs, detail };
}

/**
 * The established connections `pid` has open to any of `ports`, by socket inode, read without blocking: the
 * kernel's TCP tables take tens of ms to read on a busy host (75-225 ms at load 28), and the fault proxies
 * whose resets are being watched run on this event loop.
 */
export async function linksOf(pid: number, ports: ReadonlySet<number>): Promise<Set<string>> {
  const [tables, inodes] = await Promise.all([readTables(), socketInodesAsync(pid)]);
  const open = establishedTo(tables, ports);
  return new Set([...inodes].filter((inode) => open.has(inode)));
}

/** reset-holder's start: none of the links the holder had open at the reset is still established. */
export async function resetShown(pid: number, ports: ReadonlySet<number>, before: ReadonlySet<string>) {
  const now = await linksOf(pid, ports);
  const open = [...before].filter((inode) => now.has(inode)).length;
  return {
    effect: open === 0,
    detail: `${before.size - open} of the ${before.size} links client process ${pid} had open are gone`,
  };
}

/** reset-holder's heal: the holder has a link it opened since the reset, established (the effect is its absence). */
export async function resetHealed(pid: number, ports: ReadonlySet<number>, before: ReadonlySet<string>) {
  const fresh = [...(await linksOf(pid, ports))].filter((inode) => !before.has(inode));
  return {
    effect: fresh.length === 0,
    detail: `client process ${pid} has ${fresh.length} new established links to the servers`,
  };
}
