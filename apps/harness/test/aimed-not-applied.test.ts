import { checkLiveness, type HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { memoryBackend } from '../src/backends/memory.js';
import type { Deployment } from '../src/backends/types.js';
import { nowNs } from '../src/history/clock.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { parseRunOptions } from '../src/index.js';
import { FLICKER_TRIGGERS, runAimedFault } from '../src/nemesis/aimed.js';
import type { ClientHandle, NemesisContext } from '../src/nemesis/nemesis.js';
import { pauseClient } from '../src/nemesis/nemesis.js';
import { seededRandom } from '../src/nemesis/random.js';
import { validateRun } from '../src/run/compatibility.js';

/**
 * R4 F1/F5: an aimed fault that gave up waiting for its moment was recorded `info`, which the checkers
 * hold in force until the final heal, so a lock stuck for good (nobody releases: nothing to aim at) was
 * excused by the very fault that found nothing to do; and its start was recorded when the nemesis began
 * to wait, so the bounds check exempted a client's ops from before it was stopped. Here the faults run
 * against a scripted context (the moment comes, or not, when the test says), and the nemesis ops they
 * record are judged as the checkers would.
 */

const noWrite = (): never => {
  throw new Error('the fault must not touch the servers here');
};

function context(moment: { window?: ClientHandle; afterMs: number }) {
  const events: UnindexedEvent[] = [];
  const controller = new AbortController();
  const deployment = {
    nodes: ['n1'],
    faults: { kill: noWrite, restart: async () => {}, toxic: noWrite, heal: async () => {} },
  } as unknown as Deployment;
  let windowAt = 0;
  const wait = <T>(value: T | undefined, timeoutMs: number, onTime = () => {}) =>
    new Promise<T | undefined>((resolve) =>
      setTimeout(
        () => {
          onTime();
          resolve(value);
        },
        Math.min(timeoutMs, moment.afterMs),
      ),
    );
  const ctx: NemesisContext = {
    deployment,
    ttlMs: 200,
    sessionMs: 200,
    seed: 1,
    nextWindow: (timeoutMs) =>
      wait(moment.window, timeoutMs, () => {
        windowAt = nowNs();
      }),
    nextEvent: (_accept, timeoutMs) => wait(undefined, timeoutMs),
    record: (event) => events.push(event),
    progress: () => {},
    signal: controller.signal,
    startedAt: performance.now(),
    applied: 0,
  };
  return { ctx, events, windowAt: () => windowAt };
}

const client: ClientHandle = { index: 1, process: 1, grant: undefined, pause() {}, resume() {} };

describe('an aimed fault whose moment never came', () => {
  it.each(['stall-holder', 'flicker', 'suspend', 'pause-client'] as const)(
    '%s records its start as failed, "not applied", and says it did not apply',
    async (fault) => {
      const { ctx, events } = context({ afterMs: 30 });
      const summary =
        fault === 'pause-client'
          ? await pauseClient(ctx, 50, 30)
          : await runAimedFault(fault, ctx, seededRandom(1), 30);
      expect(summary.applied).toBe(false);
      expect(summary.error).toMatch(/^not applied: no client/);
      expect(events.map((e) => [e.type, e.f])).toEqual([
        ['invoke', 'start'],
        ['fail', 'start'],
      ]);
      expect(events[1]!.error).toMatch(/^not applied: /);
      expect(ctx.applied).toBe(0);
    },
  );

  it('excuses nothing: a lock stuck from early on is convicted past the fault that found nothing to aim at', async () => {
    const { ctx, events } = context({ afterMs: 20 });
    await runAimedFault('stall-holder', ctx, seededRandom(1), 20);
    // R4's h1 history: client 0 holds and releases at 1 s, nobody is granted again; clients 1 and 2 wait
    // 5 s at a time to 14 s. The stall-holder's ops as just recorded, placed at 1.5 s and 4.5 s.
    const [invoke, completion] = events;
    const ms = (t: number) => Math.round(t * 1e6);
    const h: Omit<HistoryEvent, 'index'>[] = [
      { time: 0, process: 0, type: 'invoke', f: 'acquire', value: { resource: 'stock', waitMs: 5000 } },
      {
        time: ms(10),
        process: 0,
        type: 'ok',
        f: 'acquire',
        value: { grant: 'c0.1', resource: 'stock', validUntil: String(ms(1010)), at: String(ms(10)) },
      },
      { time: ms(1000), process: 0, type: 'invoke', f: 'release', value: { grant: 'c0.1' } },
      { time: ms(1005), process: 0, type: 'ok', f: 'release', value: null },
      { ...invoke!, time: ms(1500) },
      { ...completion!, time: ms(4500) },
      { time: ms(14_500), process: 'nemesis', type: 'invoke', f: 'stop', value: { fault: 'all' } },
      { time: ms(14_510), process: 'nemesis', type: 'ok', f: 'stop', value: { fault: 'all' } },
    ];
    for (let t = 1100; t < 14_000; t += 5100) {
      for (const p of [1, 2]) {
        h.push({
          time: ms(t),
          process: p,
          type: 'invoke',
          f: 'acquire',
          value: { resource: 'stock', waitMs: 5000 },
        });
        h.push({ time: ms(t + 5050), process: p, type: 'fail', f: 'acquire', value: { code: 'timeout' } });
      }
    }
    const history = h.sort((a, b) => a.time - b.time).map((e, index) => ({ ...e, index }) as HistoryEvent);
    const result = checkLiveness(history, { boundMs: 2_000, settleMs: 2_000 });
    expect(result.verdict).toBe('illegal');
  });
});

describe('an aimed fault whose moment came', () => {
  it.each(['stall-holder', 'pause-client'] as const)(
    '%s records its start invoke when it acts, not while it waited',
    async (fault) => {
      const { ctx, events, windowAt } = context({ window: client, afterMs: 150 });
      const summary =
        fault === 'pause-client'
          ? await pauseClient(ctx, 10, 1_000)
          : await runAimedFault(fault, ctx, seededRandom(1), 1_000);
      expect(summary.applied).toBe(true);
      const start = events.find((e) => e.f === 'start' && e.type === 'invoke')!;
      expect(start.time).toBeGreaterThanOrEqual(windowAt());
      expect(events.find((e) => e.f === 'start' && e.type === 'ok')).toBeDefined();
    },
  );
});

describe('an aimed fault a workload can never trigger is refused before anything starts', () => {
  it('flicker on cas or cron (nothing is ever released or extended); allowed where clients release or resign', () => {
    for (const workload of ['cas', 'cron'] as const) {
      const options = parseRunOptions({ backend: 'memory', workload, fault: 'flicker', fencing: false });
      expect(() => validateRun(options, memoryBackend)).toThrow(/fault flicker .* never makes/);
    }
    for (const workload of ['inventory', 'mutex'] as const) {
      const options = parseRunOptions({ backend: 'memory', workload, fault: 'flicker', fencing: false });
      expect(() => validateRun(options, memoryBackend)).not.toThrow();
    }
    expect(FLICKER_TRIGGERS.has('resign')).toBe(true);
  });
});
