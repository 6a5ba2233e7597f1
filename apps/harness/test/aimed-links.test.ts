import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { etcdBackend } from '../src/backends/etcd.js';
import { memoryBackend } from '../src/backends/memory.js';
import type { Deployment } from '../src/backends/types.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { parseRunOptions } from '../src/index.js';
import { runAimedFault } from '../src/nemesis/aimed.js';
import { linkCounts, processLinks, silenced } from '../src/nemesis/aimed-links.js';
import { FAULTS } from '../src/nemesis/faults.js';
import type { ClientHandle, NemesisContext } from '../src/nemesis/nemesis.js';
import { seededRandom } from '../src/nemesis/random.js';
import { validateRun } from '../src/run/compatibility.js';

/**
 * The faults on one holder's links (aimed-links.ts): refused where no proxy can cut one client, acting in
 * order (the holder stopped while its links are cut, resumed, healed at the stop), and probed from the
 * kernel's socket tables, which these tests read against real loopback connections of a child process.
 */

interface Acts {
  log: string[];
  events: UnindexedEvent[];
}

function scripted(
  faults: Partial<Deployment['faults']>,
  acts: Acts,
  moment: { window: boolean; events?: (client: ClientHandle) => UnindexedEvent | undefined },
) {
  const client: ClientHandle & { pid: number } = {
    index: 1,
    process: 1,
    pid: process.pid,
    grant: undefined,
    pause: () => acts.log.push('pause'),
    resume: () => acts.log.push('resume'),
  };
  const other: ClientHandle = { index: 2, process: 2, grant: undefined, pause() {}, resume() {} };
  const ctx: NemesisContext = {
    deployment: {
      backend: 'etcd',
      nodes: ['n1'],
      endpoints: ['127.0.0.1:1'],
      faults,
    } as unknown as Deployment,
    ttlMs: 100,
    sessionMs: 100,
    seed: 1,
    async nextWindow(_timeoutMs, _signal, wait) {
      if (!moment.window) return undefined;
      if (wait?.pause) client.pause();
      return client;
    },
    async nextEvent(accept, timeoutMs) {
      const event = moment.events?.(client);
      if (event && accept(event, other)) return { event, client: other };
      if (event && accept(event, client)) return { event, client };
      await new Promise((resolve) => setTimeout(resolve, Math.min(timeoutMs, 50)));
      return undefined;
    },
    record: (event) => acts.events.push(event),
    progress: () => {},
    signal: new AbortController().signal,
    startedAt: performance.now(),
    applied: 0,
  };
  return ctx;
}

describe('faults on one holder’s links', () => {
  it('are described, and refused on a backend whose clients pass no proxy', () => {
    expect(FAULTS['cut-holder']).toMatch(/cut a holder's process off/);
    expect(FAULTS['reset-holder']).toMatch(/reset a holder's connections/);
    for (const fault of ['cut-holder', 'reset-holder']) {
      const memory = parseRunOptions({ backend: 'memory', workload: 'inventory', fault, fencing: false });
      expect(() => validateRun(memory, memoryBackend)).toThrow(new RegExp(fault));
      const etcd = parseRunOptions({ backend: 'etcd', workload: 'inventory', fault, fencing: true });
      expect(() => validateRun(etcd, etcdBackend)).not.toThrow();
    }
  });

  it.each(['cut-holder', 'reset-holder'] as const)(
    '%s on a deployment that cannot cut one process records a failed start and leaves the holder running',
    async (fault) => {
      const acts: Acts = { log: [], events: [] };
      const ctx = scripted({ heal: async () => {} }, acts, { window: true });
      const summary = await runAimedFault(fault, ctx, seededRandom(1), 50);
      expect(summary.applied).toBe(false);
      expect(summary.error).toMatch(/not supported/);
      expect(acts.events.map((e) => [e.type, e.f])).toEqual([
        ['invoke', 'start'],
        ['fail', 'start'],
      ]);
      expect(acts.log).toEqual(['pause', 'resume']);
    },
  );

  it('cut-holder cuts the stopped holder, resumes it, and heals once another client was granted', async () => {
    const acts: Acts = { log: [], events: [] };
    const faults = {
      async cutProcess(pid: number, options: { reset: boolean }) {
        acts.log.push(`cut ${pid === process.pid} reset=${options.reset}`);
        return 3;
      },
      async heal() {
        acts.log.push('heal');
      },
    };
    const ctx = scripted(faults, acts, {
      window: true,
      events: () => ({
        time: Number(process.hrtime.bigint()) + 1e6,
        process: 2,
        type: 'ok',
        f: 'acquire',
        value: null,
      }),
    });
    const summary = await runAimedFault('cut-holder', ctx, seededRandom(1), 50);
    expect(summary.applied).toBe(true);
    expect(acts.log).toEqual(['pause', 'cut true reset=false', 'resume', 'heal']);
    expect(summary.evidence).toMatchObject({ otherClient: 2 });
    expect((summary.evidence?.cutMs as number) >= 100).toBe(true);
    const [, startOk, stopInvoke] = acts.events;
    expect(startOk).toMatchObject({ type: 'ok', f: 'start', value: { fault: 'cut-holder', linksHit: 3 } });
    expect(stopInvoke).toMatchObject({
      type: 'invoke',
      f: 'stop',
      value: { fault: 'cut-holder', client: 1 },
    });
    expect(summary.observed?.started).toBeDefined();
  });

  it('reset-holder resets the stopped holder’s links and heals as soon as its release has failed', async () => {
    const acts: Acts = { log: [], events: [] };
    const faults = {
      async cutProcess(_pid: number, options: { reset: boolean }) {
        acts.log.push(`cut reset=${options.reset}`);
        return 2;
      },
      async heal() {
        acts.log.push('heal');
      },
    };
    const ctx = scripted(faults, acts, {
      window: true,
      events: () => ({
        time: Number(process.hrtime.bigint()) + 1e6,
        process: 1,
        type: 'info',
        f: 'release',
        value: null,
      }),
    });
    const summary = await runAimedFault('reset-holder', ctx, seededRandom(1), 50);
    expect(summary.applied).toBe(true);
    expect(acts.log).toEqual(['pause', 'cut reset=true', 'resume', 'heal']);
    expect(summary.evidence).toMatchObject({ release: 'info' });
    // Healed at once, not after the longest outage (a fifth of the session, at least 100 ms).
    expect(summary.evidence?.outageMs as number).toBeLessThan(100);
  });
});

describe('the links probes read the kernel’s socket tables', () => {
  const servers: Server[] = [];
  const children: ReturnType<typeof spawn>[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  /** A child process that connects to `port` and writes a byte every 20 ms, reconnecting when reset. */
  function writer(port: number) {
    const script = `const net=require('node:net');function go(){const s=net.connect(${port},'127.0.0.1');s.on('error',()=>setTimeout(go,20));s.on('connect',()=>{const t=setInterval(()=>s.write('x'),20);s.on('close',()=>clearInterval(t))})}go();setTimeout(()=>process.exit(0),20000)`;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    children.push(child);
    return child.pid as number;
  }

  async function listen(onConnection: (socket: Socket) => void): Promise<number> {
    const server = createServer({ pauseOnConnect: true }, onConnection);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }

  async function until(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      if (check()) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return check();
  }

  it('sees a link that sends and receives nothing back (cut), and the answer once it comes', async () => {
    const accepted: Socket[] = [];
    const port = await listen((socket) => {
      socket.on('data', () => {}); // read, never answer
      socket.resume();
      accepted.push(socket);
    });
    const pid = writer(port);
    const ports = new Set([port]);
    expect(await until(() => processLinks(pid, ports).size === 1)).toBe(true);
    const before = await linkCounts(pid, ports);
    expect(before.size).toBe(1);
    const since = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cut = silenced(await linkCounts(pid, ports), before, Math.round(performance.now() - since), 200);
    expect(cut.effect).toBe(true);
    expect(cut.detail).toMatch(/links to the servers sent [1-9]\d* bytes and received 0$/);
    for (const socket of accepted) socket.write('answer');
    let answered = false;
    for (let i = 0; i < 100 && !answered; i++) {
      answered = !silenced(await linkCounts(pid, ports), before, 1_000, 0).effect;
      if (!answered) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(answered).toBe(true);
  });
});
