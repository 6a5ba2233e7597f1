import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { EffectQuery, Observation } from '@fencekit/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redlockBackend } from '../src/backends/redlock.js';
import type { Deployment, FaultDriver } from '../src/backends/types.js';
import type { CheckOutcome } from '../src/check/check.js';
import { nowNs } from '../src/history/clock.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { runAimedFault } from '../src/nemesis/aimed.js';
import { linkCounts, linksGone, processLinks } from '../src/nemesis/aimed-links.js';
import {
  allSeen,
  cutShown,
  linksOf,
  processState,
  resetHealed,
  resetShown,
} from '../src/nemesis/client-probes.js';
import type { ClientHandle, FaultWindowSummary, NemesisContext } from '../src/nemesis/context.js';
import { startServerFault } from '../src/nemesis/faults.js';
import { observePhase, withFaultEffects } from '../src/nemesis/observation.js';
import { seededRandom } from '../src/nemesis/random.js';
import { reportsDir, run } from './support/runs.js';

/**
 * #20 for the faults added for the mutation score (#13): each part of a fault is probed on its own.
 * stall-acquire and drift-majority stop a client (SIGSTOP) besides slowing links or speeding clocks: /proc
 * must show that client stopped, and running after; a stop that never landed keeps the run from `ok`
 * (before, only the links or clocks were probed and such a pass counted as observed). The minority faults act
 * on several servers: each of them is probed, so a server the fault missed is not hidden behind the first.
 *
 * Real processes stand in for the clients (stopped and continued by real signals); the minority faults run on
 * real Redis servers (the Redlock deployment). Only the moments the faults wait for are scripted.
 */

const ok: CheckOutcome = { verdict: 'ok', problems: [], checkers: {} };
const children: ChildProcess[] = [];

function clientProcess(script = 'setInterval(() => {}, 1000)'): ChildProcess {
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  children.push(child);
  return child;
}

afterAll(() => {
  for (const child of children) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

/** A client handle on a real process; `lies` makes pause() a no-op (a SIGSTOP that never reached it). */
function handle(child: ChildProcess, index: number, lies = false): ClientHandle & { grantNow(): void } {
  let grant: ClientHandle['grant'];
  return {
    index,
    process: index,
    get grant() {
      return grant;
    },
    grantNow() {
      const at = nowNs();
      grant = { askedAt: at, grantedAt: at, validUntil: at + 300e6 };
    },
    pid: child.pid,
    pause: () => {
      if (!lies) child.kill('SIGSTOP');
    },
    resume: () => child.kill('SIGCONT'),
  };
}

/**
 * A deployment whose fault primitives only record what they were asked, and whose probe of a server
 * fault (latency, clock) sees whatever was asked for: these tests are about the client part.
 */
function fakeServers(nodes: string[]): Deployment {
  const asked = new Set<string>();
  const faults = {
    latency: async (node: string) => void asked.add(node),
    clock: async (node: string) => void asked.add(node),
    heal: async () => asked.clear(),
    observe: async (query: EffectQuery): Promise<Observation> => {
      const effect = asked.has(String(query.node));
      return { seen: effect === (query.phase === 'started'), detail: `${query.fault} ${effect}`, afterMs: 1 };
    },
  };
  return { nodes, endpoints: [], faults } as unknown as Deployment;
}

/** The run as the faults see it: `holder` opens its window (stopped there when asked), another client is granted. */
function scripted(deployment: Deployment, holder: ClientHandle & { grantNow(): void }, other: ClientHandle) {
  const ctx: NemesisContext = {
    deployment,
    ttlMs: 200,
    sessionMs: 200,
    seed: 1,
    nextWindow: async (_timeoutMs, _signal, wait) => {
      holder.grantNow();
      if (wait?.accept && !wait.accept(holder)) return undefined;
      if (wait?.pause) holder.pause();
      return holder;
    },
    nextEvent: async (accept, timeoutMs) => {
      // The holder's acquire invoked (stall-acquire's moment), another client granted later, the holder's
      // acquire answered.
      await new Promise((resolve) => setTimeout(resolve, Math.min(timeoutMs, 20)));
      const time = nowNs();
      const candidates: [UnindexedEvent, ClientHandle][] = [
        [{ time, process: holder.process, type: 'invoke', f: 'acquire', value: null }, holder],
        [{ time, process: other.process, type: 'ok', f: 'acquire', value: null }, other],
        [{ time, process: holder.process, type: 'ok', f: 'acquire', value: null }, holder],
      ];
      for (const [event, client] of candidates) if (accept(event, client)) return { event, client };
      return undefined;
    },
    record: () => {},
    progress: () => {},
    signal: new AbortController().signal,
    startedAt: performance.now(),
    applied: 0,
  };
  return ctx;
}

function expectSeen(summary: FaultWindowSummary, started: RegExp) {
  const what = JSON.stringify(summary);
  expect(summary.applied, what).toBe(true);
  expect(summary.observed?.started?.seen, what).toBe(true);
  expect(summary.observed?.started?.detail, what).toMatch(started);
  expect(summary.observed?.healed?.seen, what).toBe(true);
  expect(summary.observed?.healed?.detail, what).toMatch(/client process \d+ state [RS]/);
  expect(withFaultEffects(ok, [summary]).verdict).toBe('ok');
}

function expectUnseen(summary: FaultWindowSummary, detail: RegExp) {
  const what = JSON.stringify(summary);
  expect(summary.applied, what).toBe(true);
  expect(summary.observed?.started?.seen, what).toBe(false);
  expect(summary.observed?.started?.detail, what).toMatch(detail);
  const judged = withFaultEffects(ok, [summary]);
  expect(judged.verdict).toBe('unknown');
  expect(judged.checkers['fault-effects']?.error).toMatch(/was applied but its effect was not observed/);
}

describe('allSeen', () => {
  const phase = (seen: boolean, atMs: number) => ({ seen, detail: seen ? 'yes' : 'no', atMs });
  it('is seen only when every part is, stamped by the last', () => {
    expect(allSeen([phase(true, 5), phase(true, 9)], ['a', 'b'])).toEqual({
      seen: true,
      detail: 'a: yes; b: yes',
      atMs: 9,
    });
    expect(allSeen([phase(true, 5), phase(false, 3)])?.seen).toBe(false);
  });
  it('a part with no reading counts as unseen; no parts is no observation', () => {
    expect(allSeen([phase(true, 5), undefined], ['a', 'b'])).toEqual({
      seen: false,
      detail: 'a: yes; b: not probed',
      atMs: 5,
    });
    expect(allSeen([])).toBeUndefined();
  });
});

describe('stall-acquire and drift-majority: the stopped client is seen in /proc', () => {
  it('stall-acquire: the links slowed and the client stopped (state T) during the stall, both gone after', async () => {
    const holder = handle(clientProcess(), 1);
    const ctx = scripted(fakeServers(['n1']), holder, handle(clientProcess(), 2));
    const summary = await runAimedFault('stall-acquire', ctx, seededRandom(1), 1_000);
    expectSeen(summary, /links: latency true; client 1: client process \d+ state [Tt]/);
    expect(processState(holder.pid)).not.toMatch(/[Tt]/);
  }, 20_000);

  it('stall-acquire: a stop that never landed is not seen, though the links were slowed', async () => {
    const ctx = scripted(fakeServers(['n1']), handle(clientProcess(), 1, true), handle(clientProcess(), 2));
    const summary = await runAimedFault('stall-acquire', ctx, seededRandom(1), 1_000);
    expectUnseen(summary, /links: latency true; client 1: client process \d+ state [RS]/);
  }, 20_000);

  it('drift-majority: the clocks and the stalled holder are seen, and seen to end', async () => {
    const holder = handle(clientProcess(), 1);
    const ctx = scripted(fakeServers(['n1', 'n2', 'n3']), holder, handle(clientProcess(), 2));
    const summary = await runAimedFault('drift-majority', ctx, seededRandom(1), 1_000);
    expectSeen(summary, /clocks: clock true; clock true; client 1: client process \d+ state [Tt]/);
  }, 20_000);

  it('drift-majority: a holder stop that never landed is not seen, though the clocks ran fast', async () => {
    const ctx = scripted(
      fakeServers(['n1', 'n2', 'n3']),
      handle(clientProcess(), 1, true),
      handle(clientProcess(), 2),
    );
    const summary = await runAimedFault('drift-majority', ctx, seededRandom(1), 1_000);
    expectUnseen(summary, /clocks: clock true; clock true; client 1: client process \d+ state [RS]/);
  }, 20_000);

  it('a whole redis run: every applied stall-acquire was seen with its client stopped, and seen to end', async () => {
    const out = reportsDir();
    try {
      const { run: r, results } = await run({
        backend: 'redis',
        workload: 'mutex',
        fault: 'stall-acquire',
        clients: 3,
        time: '10s',
        seed: 2,
        out,
      });
      const applied = r.meta.faultsApplied.filter((f) => f.applied);
      expect(applied.length, JSON.stringify(r.meta.faultsApplied)).toBeGreaterThan(0);
      for (const f of applied) {
        expect(f.observed?.started?.seen, JSON.stringify(f)).toBe(true);
        expect(f.observed?.started?.detail).toMatch(/links: .*; client \d+: client process \d+ state [Tt]/);
        expect(f.observed?.healed?.seen, JSON.stringify(f)).toBe(true);
      }
      expect(results.checkers['fault-effects']).toBeUndefined();
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});

/** `deployment` with `node`'s clock and latency primitives replaced by ones that do nothing. */
function missing(deployment: Deployment, node: string): Deployment {
  const real = deployment.faults;
  const skip: Partial<FaultDriver> = {
    clock: async (id, spec) => (id === node ? undefined : real.clock(id, spec)),
    latency: async (id, spec) => (id === node ? undefined : real.latency(id, spec)),
  };
  const driver = new Proxy(real, {
    get: (target, key) => {
      if (Object.hasOwn(skip, key)) return skip[key as keyof FaultDriver];
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...deployment, faults: driver };
}

describe('the minority faults: every server of the minority is probed (real Redis servers)', () => {
  let redlock: Deployment;
  beforeAll(async () => {
    await redlockBackend.preflight('local');
    redlock = await redlockBackend.deploy({ provider: 'local' });
  }, 90_000);
  afterAll(() => redlock?.close());

  it.each(['clock-jump-minority', 'latency-minority'] as const)(
    '%s: seen on each server of the minority (TIME / PING through the proxy), and seen to end',
    async (fault) => {
      const startedAt = performance.now();
      const started = await startServerFault(fault, redlock, seededRandom(3), 1_000);
      const nodes = started.target.nodes ?? [];
      expect(nodes.length).toBe(2);
      let shown: Awaited<ReturnType<typeof observePhase>>;
      try {
        shown = await observePhase(redlock, fault, started.target, 'started', 3_000, startedAt);
      } finally {
        await started.heal();
      }
      expect(shown.seen, shown.detail).toBe(true);
      for (const node of nodes) expect(shown.detail).toContain(`${node}: `);
      const gone = await observePhase(redlock, fault, started.target, 'healed', 5_000, startedAt);
      expect(gone.seen, gone.detail).toBe(true);
    },
    60_000,
  );

  it.each(['clock-jump-minority', 'latency-minority'] as const)(
    '%s: a server of the minority the fault missed is not hidden behind the first',
    async (fault) => {
      const startedAt = performance.now();
      // The same seed picks the same minority; the fault misses its second server.
      const nodes = (await startServerFault(fault, redlock, seededRandom(3), 1_000)).target.nodes ?? [];
      await redlock.faults.heal();
      const liar = missing(redlock, nodes[1]!);
      const started = await startServerFault(fault, liar, seededRandom(3), 1_000);
      expect(started.target.nodes).toEqual(nodes);
      let shown: Awaited<ReturnType<typeof observePhase>>;
      try {
        shown = await observePhase(liar, fault, started.target, 'started', 1_500, startedAt);
      } finally {
        await started.heal();
      }
      expect(shown.seen, shown.detail).toBe(false);
      expect(shown.detail).toContain(`${nodes[1]}: `);
    },
    60_000,
  );
});

describe('cut-holder: a cut is links that asked and got nothing back, not an idle client', () => {
  const count = (sent: number, received: number) => new Map([['127.0.0.1:1', { sent, received }]]);

  it('unit: sent and received nothing is not a cut; sent and received nothing back is; an answer is not', () => {
    expect(cutShown(count(10, 10), count(10, 10), 500, 300)).toMatchObject({ effect: false });
    expect(cutShown(count(10, 10), count(10, 10), 500, 300).detail).toMatch(/nothing asked/);
    expect(cutShown(count(50, 10), count(10, 10), 500, 300)).toMatchObject({ effect: true });
    expect(cutShown(count(50, 10), count(10, 10), 200, 300)).toMatchObject({ effect: false });
    expect(cutShown(count(50, 20), count(10, 10), 500, 300)).toMatchObject({ effect: false });
  });

  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
  });

  /** A server that reads what it is sent and never answers (a cut, as the client's kernel sees it). */
  async function silentServer(): Promise<{ port: number; accepted: Socket[] }> {
    const accepted: Socket[] = [];
    const server = createServer((socket) => {
      socket.on('data', () => {});
      socket.on('error', () => {});
      accepted.push(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as { port: number }).port, accepted };
  }

  /** Reads the child's link counts (ss), waits `ms`, reads again: what cutShown makes of the interval. */
  async function interval(pid: number, ports: Set<number>, ms: number) {
    for (let i = 0; i < 250 && processLinks(pid, ports).size === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(processLinks(pid, ports).size).toBe(1);
    const before = await linkCounts(pid, ports);
    const since = performance.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    return cutShown(await linkCounts(pid, ports), before, Math.round(performance.now() - since), ms / 2);
  }

  it('a cut that did nothing, on an idle holder, is not taken for a cut (whole fault, real links)', async () => {
    const { port } = await silentServer();
    const ports = new Set([port]);
    const idle = clientProcess(
      `const s = require('node:net').connect(${port}, '127.0.0.1'); s.on('error', () => {});
       setInterval(() => {}, 1000);`,
    );
    for (let i = 0; i < 250 && processLinks(idle.pid!, ports).size === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const deployment = {
      backend: 'etcd',
      nodes: ['n1'],
      endpoints: [`127.0.0.1:${port}`],
      faults: { cutProcess: async () => 0, heal: async () => {} },
    } as unknown as Deployment;
    const ctx = { ...scripted(deployment, handle(idle, 1), handle(clientProcess(), 2)), sessionMs: 400 };
    const summary = await runAimedFault('cut-holder', ctx, seededRandom(1), 1_000);
    expectUnseen(summary, /sent 0 bytes and received 0: nothing asked/);
  }, 30_000);

  it('real sockets: a client that keeps asking and gets no answer is seen cut; an idle one is not', async () => {
    const { port } = await silentServer();
    const ports = new Set([port]);
    const asking = clientProcess(
      `const s = require('node:net').connect(${port}, '127.0.0.1'); s.on('error', () => {});
       setInterval(() => s.write('ping'), 50);`,
    );
    const cut = await interval(asking.pid!, ports, 400);
    expect(cut.effect, cut.detail).toBe(true);
    expect(cut.detail).toMatch(/sent [1-9]\d* bytes and received 0$/);
    const idle = clientProcess(
      `const s = require('node:net').connect(${port}, '127.0.0.1'); s.on('error', () => {});
       setInterval(() => {}, 1000);`,
    );
    const quiet = await interval(idle.pid!, ports, 400);
    expect(quiet.effect, quiet.detail).toBe(false);
    expect(quiet.detail).toMatch(/sent 0 bytes and received 0: nothing asked/);
  }, 30_000);
});

describe('reset-holder: the links read without holding the event loop', () => {
  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
  });

  /** How many event-loop turns (setImmediate) ran while `work` was pending. */
  async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
    let turns = 0;
    let on = true;
    const tick = () => {
      if (!on) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await work();
    on = false;
    return turns;
  }

  /** Polls `look` (bounded) until its effect is `wanted`. */
  async function until(look: () => Promise<{ effect: boolean; detail: string }>, wanted: boolean) {
    let last = await look();
    for (let i = 0; i < 250 && last.effect !== wanted; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      last = await look();
    }
    return last;
  }

  it('the links open at a reset are seen gone, a new one after it; the loop turns while they are read', async () => {
    const accepted: Socket[] = [];
    let resetting = false;
    const server = createServer((socket) => {
      socket.on('error', () => {});
      if (resetting) socket.resetAndDestroy();
      else accepted.push(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const ports = new Set([port]);
    // A client that reconnects whenever its connection drops.
    const pid = clientProcess(
      `const net = require('node:net');
       const open = () => { const s = net.connect(${port}, '127.0.0.1'); s.on('error', () => {}); s.on('close', () => setTimeout(open, 50)); };
       open(); setInterval(() => {}, 1000);`,
    ).pid!;
    let before = new Set<string>();
    for (let i = 0; i < 250 && before.size === 0; i++) {
      before = await linksOf(pid, ports);
      if (before.size === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(before.size).toBe(1);
    expect(before).toEqual(processLinks(pid, ports));
    expect((await resetShown(pid, ports, before)).effect).toBe(false);
    // Other callbacks (the fault proxies') run while the tables are read; the synchronous reading lets none.
    expect(await turnsDuring(() => resetShown(pid, ports, before))).toBeGreaterThan(0);
    expect(await turnsDuring(async () => linksGone(pid, ports, before))).toBe(0);
    // The reset: the open link and every new one get an RST.
    resetting = true;
    for (const socket of accepted) socket.resetAndDestroy();
    const gone = await until(() => resetShown(pid, ports, before), true);
    expect(gone.detail).toBe(`1 of the 1 links client process ${pid} had open are gone`);
    resetting = false;
    const back = await until(() => resetHealed(pid, ports, before), false);
    expect(back.detail).toMatch(/has [1-9]\d* new established links to the servers/);
  }, 30_000);
});
