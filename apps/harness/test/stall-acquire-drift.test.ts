import { checkBounds, type HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { etcdBackend } from '../src/backends/etcd.js';
import { redisBackend } from '../src/backends/redis.js';
import { redlockBackend } from '../src/backends/redlock.js';
import type { BackendFactory, BackendName, Deployment } from '../src/backends/types.js';
import { nowNs } from '../src/history/clock.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { OptionsError, parseRunOptions } from '../src/index.js';
import { runAimedFault } from '../src/nemesis/aimed.js';
import type { ClientHandle, NemesisContext, WindowWait } from '../src/nemesis/context.js';
import { DRIFT_MAJORITY_RATE, DRIFT_RELEASE_LEAD_MS, majorityOf } from '../src/nemesis/drift-majority.js';
import { FAULTS, startServerFault } from '../src/nemesis/faults.js';
import { minorityOf } from '../src/nemesis/minority.js';
import { seededRandom } from '../src/nemesis/random.js';
import { stallAcquireLatencyMs } from '../src/nemesis/stall-acquire.js';
import { validateRun } from '../src/run/compatibility.js';
import { EventWatch } from '../src/run/event-watch.js';
import type { GrantSeen } from '../src/run/grants.js';
import { runSettings } from '../src/run/scenario-settings.js';

/**
 * `stall-acquire` and `drift-majority` against a scripted run: the test plays the clients' events (an
 * acquire invoked, another client granted, the stalled acquire answered) and a fake fault driver that
 * only records what it was asked, in order, so the faults' timing, records and clean-up are checked
 * exactly. What they do to real servers is measured by `fencekit mutants` (README, "Mutation score").
 */

const ttlMs = 200;

function scripted(nodes: string[]) {
  const calls: string[] = [];
  const events: UnindexedEvent[] = [];
  const watch = new EventWatch();
  const controller = new AbortController();
  let windowOf: ((wait: WindowWait) => ClientHandle | undefined) | undefined;
  const deployment = {
    nodes,
    faults: {
      latency: async (node: string, spec: { ms: number; jitterMs: number }) => {
        calls.push(`latency ${node} ${spec.ms}±${spec.jitterMs}`);
      },
      clock: async (node: string, spec: { offsetMs: number; rate?: number }) => {
        calls.push(`clock ${node} +${spec.offsetMs} ×${spec.rate}`);
      },
      heal: async () => {
        calls.push('heal');
      },
    },
  } as unknown as Deployment;
  const ctx: NemesisContext = {
    deployment,
    ttlMs,
    sessionMs: ttlMs,
    seed: 1,
    nextWindow: (timeoutMs, _signal, wait) =>
      new Promise((resolve) =>
        setTimeout(
          () => {
            const client = windowOf?.(wait ?? {});
            if (client && wait?.pause) client.pause();
            resolve(client);
          },
          Math.min(timeoutMs, 20),
        ),
      ),
    nextEvent: (accept, timeoutMs, signal) => watch.next(accept, timeoutMs, signal),
    record: (event) => events.push(event),
    progress: () => {},
    signal: controller.signal,
    startedAt: performance.now(),
    applied: 0,
  };
  const client = (index: number, grant?: GrantSeen): ClientHandle => ({
    index,
    process: index,
    grant,
    pause: () => calls.push(`pause ${index}`),
    resume: () => calls.push(`resume ${index}`),
  });
  const emit = (c: ClientHandle, type: UnindexedEvent['type'], f: string, time = nowNs()) =>
    watch.see(c, [{ time, process: c.process, type, f, value: null }]);
  return {
    ctx,
    calls,
    events,
    client,
    emit,
    onWindow: (f: typeof windowOf) => {
      windowOf = f;
    },
  };
}

const ops = (events: UnindexedEvent[]) =>
  events.map((e) => `${e.f} ${e.type} ${(e.value as { fault?: string }).fault}`);
const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stall-acquire', () => {
  it('slows every link, stops the client whose acquire was invoked at once, holds it past the session until another grant, then heals', async () => {
    const s = scripted(['n1', 'n2']);
    const [a, b] = [s.client(1), s.client(2)];
    const done = runAimedFault('stall-acquire', s.ctx, seededRandom(1), 1_000);
    await later(10);
    s.emit(a, 'invoke', 'acquire');
    // Stopped in the same turn as the invoke was seen: before any timer of this side could run.
    await Promise.resolve();
    await later(0);
    expect(s.calls).toContain('pause 1');
    const stoppedAt = nowNs();
    await later(30);
    s.emit(b, 'ok', 'acquire');
    // The stalled acquire is answered after the stop (it was in flight), once the client runs again.
    await later(ttlMs + 100);
    s.emit(a, 'fail', 'acquire');
    const summary = await done;
    const latency = stallAcquireLatencyMs(ttlMs);
    expect(s.calls).toEqual([
      `latency n1 ${latency}±0`,
      `latency n2 ${latency}±0`,
      'pause 1',
      'resume 1',
      'heal',
    ]);
    expect(summary.applied).toBe(true);
    expect(summary.target).toEqual({ client: 1 });
    expect(summary.evidence).toMatchObject({ otherClient: 2, inFlight: true, acquireOutcome: 'fail' });
    // Held at least the session and a margin, though the other grant came sooner.
    expect(summary.evidence?.stalledMs as number).toBeGreaterThanOrEqual(ttlMs + 50);
    expect(ops(s.events)).toEqual([
      'start invoke stall-acquire-latency',
      'start ok stall-acquire-latency',
      'start invoke stall-acquire',
      'start ok stall-acquire',
      'stop invoke stall-acquire',
      'stop ok stall-acquire',
      'stop invoke stall-acquire-latency',
      'stop ok stall-acquire-latency',
    ]);
    // The stop is recorded as it acts, naming the client: the stalled acquire is exempt from its bound,
    // and an op of that client that ended before the stop is not.
    const stallStart = s.events.find(
      (e) =>
        e.f === 'start' && e.type === 'invoke' && (e.value as { fault: string }).fault === 'stall-acquire',
    );
    expect(stallStart!.time).toBeLessThanOrEqual(stoppedAt);
    expect(stallStart!.time).toBeGreaterThan(stoppedAt - 50e6);
  });

  it('says the stop missed the acquire when its answer was recorded before the stop', async () => {
    const s = scripted(['n1']);
    const [a, b] = [s.client(1), s.client(2)];
    const done = runAimedFault('stall-acquire', s.ctx, seededRandom(1), 1_000);
    await later(10);
    // Invoke and answer in one batch, as a fast acquire reaches a loaded coordinator: the answer passes
    // before the fault has even stopped the client.
    const invokedAt = nowNs();
    s.emit(a, 'invoke', 'acquire', invokedAt);
    s.emit(a, 'ok', 'acquire', invokedAt + 1e5);
    await later(30);
    s.emit(b, 'ok', 'acquire');
    await later(ttlMs + 100);
    s.emit(a, 'invoke', 'acquire');
    const summary = await done;
    expect(summary.evidence).toMatchObject({ inFlight: false });
  });

  it('records a moment that never came as not applied, and still heals the latency', async () => {
    const s = scripted(['n1']);
    const summary = await runAimedFault('stall-acquire', s.ctx, seededRandom(1), 40);
    expect(summary.applied).toBe(false);
    expect(summary.error).toMatch(/not applied: no client invoked an acquire within 40 ms/);
    expect(s.calls.at(-1)).toBe('heal');
    expect(s.calls.some((c) => c.startsWith('pause'))).toBe(false);
    expect(ops(s.events)).toEqual([
      'start invoke stall-acquire-latency',
      'start ok stall-acquire-latency',
      'start invoke stall-acquire',
      'start fail stall-acquire',
      'stop invoke stall-acquire-latency',
      'stop ok stall-acquire-latency',
    ]);
  });

  it('exempts the stalled acquire from its bound, as a stopped process cannot keep time', () => {
    const ms = 1e6;
    const history: HistoryEvent[] = [
      { index: 0, time: 0, process: 1, type: 'invoke', f: 'acquire', value: { waitMs: 100 } },
      {
        index: 1,
        time: 1 * ms,
        process: 'nemesis',
        type: 'invoke',
        f: 'start',
        value: { fault: 'stall-acquire' },
      },
      {
        index: 2,
        time: 1 * ms,
        process: 'nemesis',
        type: 'ok',
        f: 'start',
        value: { fault: 'stall-acquire', client: 1, process: 1 },
      },
      {
        index: 3,
        time: 900 * ms,
        process: 'nemesis',
        type: 'invoke',
        f: 'stop',
        value: { fault: 'stall-acquire' },
      },
      {
        index: 4,
        time: 900 * ms,
        process: 'nemesis',
        type: 'ok',
        f: 'stop',
        value: { fault: 'stall-acquire' },
      },
      { index: 5, time: 2_000 * ms, process: 1, type: 'ok', f: 'acquire', value: null },
    ];
    const result = checkBounds(history, { slackMs: 100, clients: 5 });
    expect(result.stats).toMatchObject({ bounded: 1, exempt: 1, overran: 0 });
  });

  it('is refused where no acquire is ever invoked', () => {
    const options = parseRunOptions({ backend: 'redis', workload: 'cron', fault: 'stall-acquire' });
    expect(() => validateRun(options, redisBackend)).toThrow(/stall-acquire waits for a blocking acquire/);
  });
});

describe('drift-majority', () => {
  it('picks a majority of the servers, seeded', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
    const fast = majorityOf(nodes, seededRandom(7));
    expect(fast).toHaveLength(3);
    expect(new Set(fast).size).toBe(3);
    expect(majorityOf(nodes, seededRandom(7))).toEqual(fast);
    expect(majorityOf(['n1', 'n2', 'n3'], seededRandom(1))).toHaveLength(2);
  });

  it('runs the majority fast within the drift allowance, stalls a holder granted after the skew until just before its validity ends, then heals', async () => {
    const s = scripted(['n1', 'n2', 'n3', 'n4', 'n5']);
    const before = s.client(1, { askedAt: nowNs() - 1e9, grantedAt: nowNs(), validUntil: undefined });
    let validUntil = 0;
    s.onWindow((wait) => {
      expect(wait.pause).toBe(true);
      // A holder granted before the skew is not taken; one that asked after it is.
      expect(wait.accept?.(before)).toBe(false);
      validUntil = nowNs() + 300e6;
      const holder = s.client(2, { askedAt: nowNs(), grantedAt: nowNs(), validUntil });
      expect(wait.accept?.(holder)).toBe(true);
      return holder;
    });
    const started = performance.now();
    const summary = await runAimedFault('drift-majority', s.ctx, seededRandom(3), 1_000);
    const resumedAt = nowNs();
    // Let go DRIFT_RELEASE_LEAD_MS before its validity ends (not a session after another grant).
    expect(resumedAt).toBeLessThan(validUntil);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300 - DRIFT_RELEASE_LEAD_MS - 30);
    expect(DRIFT_MAJORITY_RATE).toBeGreaterThan(1);
    // Inside Redlock's default allowance (1 % of the TTL + 2 ms) for any TTL.
    expect(1 - 1 / DRIFT_MAJORITY_RATE).toBeLessThan(0.01);
    const clocks = s.calls.filter((c) => c.startsWith('clock'));
    expect(clocks).toHaveLength(3);
    for (const c of clocks) expect(c).toMatch(new RegExp(`^clock n\\d \\+0 ×${DRIFT_MAJORITY_RATE}$`));
    expect(s.calls.slice(3)).toEqual(['pause 2', 'resume 2', 'heal']);
    expect(summary).toMatchObject({ fault: 'drift-majority', applied: true, target: { client: 2 } });
    // Nobody else was granted while it was stopped: the holder left before its validity ended.
    expect(summary.evidence).toMatchObject({ rate: DRIFT_MAJORITY_RATE, holder: 2, otherClient: null });
    expect(ops(s.events)).toEqual([
      'start invoke drift-majority',
      'start ok drift-majority',
      'start invoke stall-holder',
      'start ok stall-holder',
      'stop invoke stall-holder',
      'stop ok stall-holder',
      'stop invoke drift-majority',
      'stop ok drift-majority',
    ]);
  });

  it('lets the holder go shortly after another client is granted while it is stopped, noting how early', async () => {
    const s = scripted(['n1', 'n2', 'n3', 'n4', 'n5']);
    s.onWindow(() => s.client(2, { askedAt: nowNs(), grantedAt: nowNs(), validUntil: nowNs() + 1_000e6 }));
    const started = performance.now();
    const done = runAimedFault('drift-majority', s.ctx, seededRandom(3), 1_000);
    await later(60);
    s.emit(s.client(3), 'ok', 'acquire');
    const summary = await done;
    expect(performance.now() - started).toBeLessThan(600);
    expect(s.calls.slice(3)).toEqual(['pause 2', 'resume 2', 'heal']);
    expect(summary.evidence).toMatchObject({ holder: 2, otherClient: 3 });
    expect(summary.evidence?.otherGrantedBeforeHolderValidityEndMs as number).toBeGreaterThan(500);
  });

  it('is described, and refused where clocks cannot be skewed or the backend does not take it (exit 64)', () => {
    expect(FAULTS['drift-majority']).toMatch(/majority/);
    const refuse = (factory: BackendFactory, backend: BackendName) => () =>
      validateRun(
        parseRunOptions({ backend, workload: 'mutex', fault: 'drift-majority', fencing: false }),
        factory,
      );
    expect(refuse(redlockBackend, 'redlock')).not.toThrow();
    const noShim = { ...redlockBackend, cluster: { ...redlockBackend.cluster!, clockShim: false } };
    expect(refuse(noShim, 'redlock')).toThrow(OptionsError);
    expect(refuse(noShim, 'redlock')).toThrow(/drift-majority cannot take effect on redlock: .*clock shim/);
    expect(refuse(etcdBackend, 'etcd')).toThrow(/fault drift-majority does not apply to etcd/);
    expect(refuse(redisBackend, 'redis')).toThrow(/fault drift-majority does not apply to redis/);
  });
});

describe('clock-jump-minority', () => {
  it('jumps a minority of the servers past the TTL, names them, and heals them all', async () => {
    const s = scripted(['n1', 'n2', 'n3', 'n4', 'n5']);
    const started = await startServerFault('clock-jump-minority', s.ctx.deployment, seededRandom(5), 1_000);
    const jumped = s.calls.filter((c) => c.startsWith('clock'));
    expect(jumped).toHaveLength(2);
    for (const c of jumped) expect(c).toMatch(/^clock n\d \+2000 ×undefined$/);
    expect(started.target.nodes).toHaveLength(2);
    expect(started.target.node).toBe(started.target.nodes?.[0]);
    await started.heal();
    expect(s.calls.at(-1)).toBe('heal');
    expect(minorityOf(['n1', 'n2', 'n3'], seededRandom(1))).toHaveLength(1);
  });

  it('is refused where there is no minority (one server), and where clocks cannot be skewed', async () => {
    const s = scripted(['n1']);
    await expect(
      startServerFault('clock-jump-minority', s.ctx.deployment, seededRandom(5), 1_000),
    ).rejects.toMatchObject({
      code: 'unsupported-fault',
    });
    const refuse = (factory: BackendFactory, backend: BackendName) => () =>
      validateRun(
        parseRunOptions({ backend, workload: 'mutex', fault: 'clock-jump-minority', fencing: false }),
        factory,
      );
    expect(refuse(redlockBackend, 'redlock')).not.toThrow();
    expect(refuse(etcdBackend, 'etcd')).toThrow(/does not apply to etcd/);
    expect(refuse(redisBackend, 'redis')).toThrow(/does not apply to redis/);
  });
});

describe('runs under faults that need every grant decided by the nodes alone', () => {
  it('poll instead of waiting in a queue', () => {
    expect(runSettings(undefined, ['drift-majority']).acquire).toBe('poll');
    expect(runSettings(undefined, ['clock-jump-minority', 'latency']).acquire).toBe('poll');
    expect(runSettings(undefined, ['latency']).acquire).toBe('wait');
    expect(runSettings(undefined, []).acquire).toBe('wait');
  });
});

describe('latency-minority', () => {
  it('slows a minority of the servers with jitter as large as the latency, and heals them', async () => {
    const s = scripted(['n1', 'n2', 'n3', 'n4', 'n5']);
    const started = await startServerFault('latency-minority', s.ctx.deployment, seededRandom(5), 1_000);
    expect(s.calls).toHaveLength(2);
    for (const c of s.calls) expect(c).toMatch(/^latency n\d 250±250$/);
    expect(started.target.nodes).toHaveLength(2);
    await started.heal();
    expect(s.calls.at(-1)).toBe('heal');
    const single = scripted(['n1']);
    await expect(
      startServerFault('latency-minority', single.ctx.deployment, seededRandom(5), 1_000),
    ).rejects.toMatchObject({ code: 'unsupported-fault' });
    expect(runSettings(undefined, ['latency-minority']).acquire).toBe('poll');
  });
});
