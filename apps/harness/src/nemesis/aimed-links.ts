import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { UnsupportedFaultError } from '../backends/types.js';
import { nowNs } from '../history/clock.js';
import type { UnindexedEvent } from '../history/event.js';
import { sleep } from '../workloads/util.js';
import { cutShown, resetHealed, resetShown } from './client-probes.js';
import {
  aimedStart,
  type ClientHandle,
  type FaultWindowSummary,
  type NemesisContext,
  nemesisOp,
} from './context.js';
import type { ObservedPhase } from './observation.js';
import { socketInodes } from './proc-sockets.js';

/**
 * Faults on one holder's links to the servers, through the fault proxies (`Faults.cutProcess`: the proxies
 * tell its connections from the others' by the kernel's socket tables). The holder is stopped for a moment
 * in its window (right after its validity check, before its write), its process is cut off from every
 * server, and it is resumed: its own requests meet the outage while every other client goes on. Unlike a
 * stall, its process keeps running meanwhile, so whatever its client does on its own clock (a keep-alive, a
 * background clean-up) runs into the outage too.
 *
 * - `cut-holder`: every byte held (a silent network) for longer than its session, until another client is
 *   granted (plus a margin), or twice the session and 2 s at most. The servers expire the holder's session
 *   while its write is on its way; a client that goes on believing (a keep-alive that never reports a loss)
 *   reads `held` after the heal, inside the next holder's grant, which the lease check convicts.
 * - `reset-holder`: every connection reset (RST, new ones too) from before its write until its release has
 *   failed (a fifth of its session at most): the write and the release fail at once, and the outage ends
 *   well within the session, which lives on. The key of a release that failed must then be withdrawn by the
 *   client itself (etcd: its shared session keeps it alive); one left behind starves the waiters while the
 *   holder stays out of the contest (workloads/sections.ts), which the liveness check convicts.
 */
export const LINK_FAULTS = ['cut-holder', 'reset-holder'] as const;
export type LinkFault = (typeof LINK_FAULTS)[number];

const GRANTS = new Set(['acquire', 'campaign', 'lock']);
/** reset-holder: the longest the holder stays stopped while its links are being cut. */
const STOP_CAP_MS = 100;
const ms = (ns: number) => Math.round(ns / 1e6);

/** The client's OS process id (the handle carries it in a run; scripted tests may have none). */
const pidOf = (client: ClientHandle): number | undefined => (client as { pid?: number }).pid;

export function runLinkFault(
  fault: LinkFault,
  context: NemesisContext,
  waitMs: number,
): Promise<FaultWindowSummary> {
  return fault === 'cut-holder' ? cutHolder(context, waitMs) : resetHolder(context, waitMs);
}

/**
 * Waits for a holder's window (stopping it there), cuts or resets its links and resumes it: the start op,
 * recorded as it acts. Refused (a `fail` start) where the deployment cannot cut one process.
 */
async function startOnHolder(
  context: NemesisContext,
  fault: LinkFault,
  waitMs: number,
): Promise<
  | {
      ok: true;
      holder: ClientHandle;
      pid: number;
      at: number;
      before: Set<string>;
      counts: Map<string, LinkCount>;
      /** When `counts` were read (cut-holder). */
      countedAt: number;
    }
  | { error: string }
> {
  const { faults } = context.deployment;
  let holder: ClientHandle | undefined;
  let pid = 0;
  let at = 0;
  let before = new Set<string>();
  let counts = new Map<string, LinkCount>();
  let countedAt = 0;
  const started = await aimedStart(
    context,
    { fault },
    () => context.nextWindow(waitMs, context.signal, { pause: true }),
    `no client reached its validity check within ${waitMs} ms`,
    async (client) => {
      let resumed = false;
      const resume = () => {
        if (!resumed) client.resume();
        resumed = true;
      };
      try {
        const found = pidOf(client);
        if (!faults.cutProcess || found === undefined) {
          throw new UnsupportedFaultError(
            fault,
            `${context.deployment.backend} (no proxy to cut one client)`,
          );
        }
        pid = found;
        const grant = client.grant;
        const ports = proxyPorts(context.deployment.endpoints);
        // The links open at a reset, which its probe must see gone (one filtered /proc read).
        if (fault === 'reset-holder') before = processLinks(pid, ports);
        at = nowNs();
        const cutting = faults.cutProcess(pid, { reset: fault === 'reset-holder' });
        // reset-holder's client counts its session from its last renewal while it is stopped: on a loaded
        // host the proxies can take a second to place its connections, so it is resumed after at most
        // STOP_CAP_MS; its write then races the cut, and the record says whether it was in place first.
        const inPlace =
          fault === 'reset-holder'
            ? await Promise.race([cutting.then(() => true), sleep(STOP_CAP_MS).then(() => false)])
            : await cutting.then(() => true);
        resume();
        const hit = await cutting;
        // The kernel's byte counts once the cut holds (`ss`, a process spawn: not while the holder is
        // stopped): nothing may arrive after them, which is what the cut probe checks.
        if (fault === 'cut-holder') {
          counts = await linkCounts(pid, ports).catch(() => new Map<string, LinkCount>());
          countedAt = nowNs();
        }
        holder = client;
        return {
          client: client.index,
          process: client.process,
          pid,
          linksHit: hit,
          cutBeforeResume: inPlace,
          cutMs: ms(nowNs() - at),
          heldForMs: grant ? ms(at - grant.grantedAt) : null,
          validLeftMs: grant?.validUntil === undefined ? null : ms(grant.validUntil - at),
          sessionMs: context.sessionMs,
        };
      } finally {
        // Stopped only while its links were being cut: from here on it runs into the outage.
        resume();
      }
    },
  );
  if (!started.ok || !holder) return { error: started.ok ? 'no holder' : started.error };
  return { ok: true, holder, pid, at, before, counts, countedAt };
}

/** See LINK_FAULTS: the holder cut off, silently, past its session and until another client is granted. */
async function cutHolder(context: NemesisContext, waitMs: number): Promise<FaultWindowSummary> {
  const { sessionMs, startedAt } = context;
  const marginMs = Math.min(200, Math.max(50, Math.round(context.ttlMs / 4)));
  const minCutMs = sessionMs + marginMs;
  const maxCutMs = 2 * sessionMs + 2_000;
  const started = await startOnHolder(context, 'cut-holder', waitMs);
  if (!('ok' in started)) return { fault: 'cut-holder', target: {}, applied: false, error: started.error };
  const { holder, pid, at, counts, countedAt } = started;
  const ports = proxyPorts(context.deployment.endpoints);
  context.progress(`nemesis: cut-holder: client ${holder.index} cut off (session ${sessionMs} ms)`);
  // A keep-alive interval (a third of the session) at least: a client that is only idle gets answers by then.
  const quietMs = Math.max(300, Math.round(sessionMs / 3));
  const shown = pollLinks(
    async () => cutShown(await linkCounts(pid, ports), counts, ms(nowNs() - countedAt), quietMs),
    'started',
    minCutMs,
    startedAt,
  );
  let other: { event: UnindexedEvent; client: ClientHandle } | undefined;
  try {
    const next = context.nextEvent(
      (event, client) =>
        client.index !== holder.index && event.type === 'ok' && GRANTS.has(event.f) && event.time > at,
      maxCutMs,
      context.signal,
    );
    await sleep(minCutMs, context.signal);
    other = await next;
    if (other) await sleep(marginMs, context.signal);
  } finally {
    // Never leave a client cut off, whatever happened meanwhile.
    await nemesisOp(context, 'stop', { fault: 'cut-holder', client: holder.index }, async () => {
      await context.deployment.faults.heal();
      return { cutMs: ms(nowNs() - at) };
    });
  }
  const evidence = {
    cutMs: ms(nowNs() - at),
    otherClient: other?.client.index ?? null,
    otherGrantedAfterMs: other ? ms(other.event.time - at) : null,
    cutShort: context.signal.aborted,
  };
  const atHeal = await linkCounts(pid, ports).catch(() => new Map<string, LinkCount>());
  const healedAt = nowNs();
  const observed = {
    started: await shown,
    healed: await pollLinks(
      async () => silenced(await linkCounts(pid, ports), atHeal, ms(nowNs() - healedAt), 0),
      'healed',
      5_000,
      startedAt,
    ),
  };
  return { fault: 'cut-holder', target: { client: holder.index }, applied: true, evidence, observed };
}

/** See LINK_FAULTS: the holder's links reset from its window until its release has failed, briefly. */
async function resetHolder(context: NemesisContext, waitMs: number): Promise<FaultWindowSummary> {
  const { sessionMs, startedAt } = context;
  // The session must outlive the outage: the client counts at most the TTL from its last renewal, a third
  // of it (one keep-alive interval) may have gone by at the window, and a reconnect takes its own time.
  const maxOutageMs = Math.max(100, Math.round(Math.min(sessionMs, context.ttlMs) / 3));
  const started = await startOnHolder(context, 'reset-holder', waitMs);
  if (!('ok' in started)) return { fault: 'reset-holder', target: {}, applied: false, error: started.error };
  const { holder, pid, at, before } = started;
  const resumedAt = nowNs();
  const ports = proxyPorts(context.deployment.endpoints);
  context.progress(`nemesis: reset-holder: client ${holder.index}'s links reset`);
  const shown = pollLinks(() => resetShown(pid, ports, before), 'started', maxOutageMs, startedAt);
  // Only the holder's release matters: once it has failed, the outage has done its work.
  const released = context.nextEvent(
    (event, client) =>
      client.index === holder.index && event.f === 'release' && event.type !== 'invoke' && event.time > at,
    maxOutageMs,
    context.signal,
  );
  let release: UnindexedEvent | undefined;
  try {
    release = (await released)?.event;
  } finally {
    // Never leave a client cut off, whatever happened meanwhile.
    await nemesisOp(context, 'stop', { fault: 'reset-holder', client: holder.index }, async () => {
      await context.deployment.faults.heal();
      return { outageMs: ms(nowNs() - at) };
    });
  }
  const evidence = {
    outageMs: ms(nowNs() - at),
    stoppedMs: ms(resumedAt - at),
    // The holder's release as it ended within the outage (fail/info: it failed; ok: it got through first).
    release: release?.type ?? null,
    releaseAfterMs: release ? ms(release.time - at) : null,
    cutShort: context.signal.aborted,
  };
  const observed = {
    started: await shown,
    healed: await pollLinks(() => resetHealed(pid, ports, before), 'healed', 5_000, startedAt),
  };
  return { fault: 'reset-holder', target: { client: holder.index }, applied: true, evidence, observed };
}

/*
 * Independent probes: the kernel's view of the holder's TCP connections to the proxies (its /proc/<pid>/fd
 * and the host's TCP tables), never the proxies' own bookkeeping.
 */

interface TcpRow {
  local: string;
  remote: string;
  established: boolean;
  inode: string;
}

/** A /proc/net/tcp{,6} address as 'a.b.c.d:port' (IPv4 or IPv4-mapped), or the raw field otherwise. */
function address(field: string): string {
  const [hex = '', portHex = '0'] = field.split(':');
  const v4 = hex.length === 8 ? hex : hex.startsWith('0000000000000000FFFF0000') ? hex.slice(24) : undefined;
  if (v4 === undefined) return field;
  const octets = [6, 4, 2, 0].map((i) => Number.parseInt(v4.slice(i, i + 2), 16));
  return `${octets.join('.')}:${Number.parseInt(portHex, 16)}`;
}

const portOf = (addr: string) => Number(addr.slice(addr.lastIndexOf(':') + 1));

/** The TCP table's rows, only those that mention one of `ports` (a busy host has thousands). */
function tcpRows(ports: ReadonlySet<number>): TcpRow[] {
  const rows: TcpRow[] = [];
  const marks = [...ports].map((p) => `:${p.toString(16).toUpperCase().padStart(4, '0')} `);
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      if (!marks.some((mark) => line.includes(mark))) continue;
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      rows.push({
        local: address(f[1]!),
        remote: address(f[2]!),
        established: f[3] === '01',
        inode: f[9]!,
      });
    }
  }
  return rows;
}

/** The ports of the client-facing endpoints (the proxies). */
export function proxyPorts(endpoints: readonly string[]): Set<number> {
  return new Set(endpoints.map(portOf).filter((p) => Number.isInteger(p) && p > 0));
}

/** The process's established connections to the proxies, by socket inode. */
export function processLinks(pid: number, ports: ReadonlySet<number>, rows = tcpRows(ports)): Set<string> {
  const inodes = socketInodes(pid);
  return new Set(
    rows
      .filter((r) => r.established && ports.has(portOf(r.remote)) && inodes.has(r.inode))
      .map((r) => r.inode),
  );
}

interface Look {
  effect: boolean;
  detail: string;
}

/** Bytes one TCP connection has sent and received, as the kernel counts them (`ss -ti`). */
export interface LinkCount {
  sent: number;
  received: number;
}

/**
 * The process's established connections to the proxies, by local address, with the kernel's byte counts:
 * `ss -tinp` (netlink), which names the owning process. Rejects when `ss` cannot be run.
 */
export function linkCounts(pid: number, ports: ReadonlySet<number>): Promise<Map<string, LinkCount>> {
  return new Promise((resolve, reject) => {
    execFile('ss', ['-tinpH', 'state', 'established'], { timeout: 2_000 }, (error, stdout) => {
      if (error) reject(error);
      else resolve(parseLinkCounts(stdout, pid, ports));
    });
  });
}

/** `ss -tinpH state established` output: a line per socket (addresses, users) and a line of its counters. */
export function parseLinkCounts(
  text: string,
  pid: number,
  ports: ReadonlySet<number>,
): Map<string, LinkCount> {
  const counts = new Map<string, LinkCount>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const fields = lines[i]!.trim().split(/\s+/);
    // Recv-Q Send-Q local peer users:(("node",pid=N,fd=M))
    if (fields.length < 4 || !/^\d+$/.test(fields[0]!)) continue;
    const [, , local, peer] = fields as [string, string, string, string];
    if (!lines[i]!.includes(`pid=${pid},`) || !ports.has(portOf(peer))) continue;
    const info = lines[i + 1] ?? '';
    const number = (name: string) => Number(new RegExp(`\\b${name}:(\\d+)`).exec(info)?.[1] ?? 0);
    counts.set(local, { sent: number('bytes_sent'), received: number('bytes_received') });
  }
  return counts;
}

/**
 * Cut: since `before` (ms ago), no link of the process received a byte (links opened since count from zero),
 * and at least `quietMs` passed, long enough for any live link to have been answered.
 */
export function silenced(
  now: ReadonlyMap<string, LinkCount>,
  before: ReadonlyMap<string, LinkCount>,
  sinceMs: number,
  quietMs: number,
): Look {
  let received = 0;
  let sent = 0;
  for (const [local, count] of now) {
    const was = before.get(local) ?? { sent: 0, received: 0 };
    received += Math.max(0, count.received - was.received);
    sent += Math.max(0, count.sent - was.sent);
  }
  return {
    effect: received === 0 && sinceMs >= quietMs,
    detail: `in ${sinceMs} ms the client's ${now.size} links to the servers sent ${sent} bytes and received ${received}`,
  };
}

/** Reset: none of the links open at the reset is still established. */
export function linksGone(pid: number, ports: ReadonlySet<number>, before: ReadonlySet<string>): Look {
  const now = processLinks(pid, ports);
  const open = [...before].filter((inode) => now.has(inode)).length;
  return {
    effect: open === 0,
    detail: `${before.size - open} of the ${before.size} links client process ${pid} had open are gone`,
  };
}

/** Healed (reset): the process has a link it opened since the reset, established (the effect is its absence). */
export function linkBack(pid: number, ports: ReadonlySet<number>, before: ReadonlySet<string>): Look {
  const fresh = [...processLinks(pid, ports)].filter((inode) => !before.has(inode));
  return {
    effect: fresh.length === 0,
    detail: `client process ${pid} has ${fresh.length} new established links to the servers`,
  };
}

/**
 * Reads `look` every 20 ms until it shows the phase's state (the effect after a start, its absence after a
 * heal), `timeoutMs` at most; the absence after a heal must hold for two readings 100 ms apart (a connection
 * the proxy accepted is briefly established before a reset reaches it).
 */
export async function pollLinks(
  look: () => Look | Promise<Look>,
  phase: 'started' | 'healed',
  timeoutMs: number,
  startedAt: number,
): Promise<ObservedPhase> {
  const wanted = phase === 'started';
  const called = performance.now();
  let heldSince: number | undefined;
  for (;;) {
    const at = performance.now();
    let seen: Look;
    try {
      seen = await look();
    } catch (error) {
      seen = { effect: !wanted, detail: `probe failed: ${(error as Error).message}` };
    }
    if (seen.effect === wanted) {
      heldSince ??= at;
      if (wanted || at - heldSince >= 100)
        return { seen: true, detail: seen.detail, atMs: Math.round(at - startedAt) };
    } else heldSince = undefined;
    if (at - called >= timeoutMs)
      return { seen: false, detail: seen.detail, atMs: Math.round(at - startedAt) };
    await sleep(20);
  }
}
