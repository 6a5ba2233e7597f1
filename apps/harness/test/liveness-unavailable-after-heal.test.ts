import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { checkersFor } from '../src/check/checkers.js';

/**
 * Issue #17: a redis-sentinel run (seed 11, failover-lagged) had every acquire of all 5 clients fail at once
 * with "Connection is closed." from the promotion to the end, through the whole recovery phase after the final
 * heal (9957 failures, no grant), and liveness passed it: its starvation check counts waiting for a free lock,
 * and acquires that fail at once wait for nothing. A run in which nobody is granted once the servers serve again
 * is convicted ('unavailable-after-heal').
 */
const s = 1e9;
const CLIENTS = 5;
const plan = {
  workload: 'inventory' as const,
  fenced: true,
  initialStock: 100,
  ttlMs: 1_000,
  backend: 'redis-sentinel',
};

/**
 * Clients granted before a fault (1-3 s); during it and after its heal each client's acquires end as
 * `afterFault` says, every 100 ms until 10 s.
 */
function run(afterFault: (time: number, process: number) => 'ok' | 'unavailable'): HistoryEvent[] {
  const events: Omit<HistoryEvent, 'index'>[] = [
    { time: 1 * s, process: 'nemesis', type: 'invoke', f: 'start', value: { fault: 'failover-lagged' } },
    { time: 1.5 * s, process: 'nemesis', type: 'ok', f: 'start', value: { fault: 'failover-lagged' } },
    { time: 3 * s, process: 'nemesis', type: 'invoke', f: 'stop', value: { fault: 'all' } },
    { time: 3.1 * s, process: 'nemesis', type: 'ok', f: 'stop', value: { fault: 'all' } },
  ];
  let fence = 0;
  for (let p = 0; p < CLIENTS; p++) {
    for (let t = 0.1 + p * 0.01; t < 10; t += 0.1) {
      const at = t * s;
      const outcome = t < 1 ? 'ok' : afterFault(t, p);
      events.push({
        time: at,
        process: p,
        type: 'invoke',
        f: 'acquire',
        value: { resource: 'stock', waitMs: 5_000 },
      });
      if (outcome === 'ok') {
        fence += 1;
        events.push(
          {
            time: at + 0.002 * s,
            process: p,
            type: 'ok',
            f: 'acquire',
            value: { resource: 'stock', grant: `c${p}.${fence}`, fence: String(fence), validMs: 1_000 },
          },
          {
            time: at + 0.003 * s,
            process: p,
            type: 'invoke',
            f: 'release',
            value: { grant: `c${p}.${fence}` },
          },
          { time: at + 0.004 * s, process: p, type: 'ok', f: 'release', value: null },
        );
      } else {
        events.push({
          time: at + 0.001 * s,
          process: p,
          type: 'fail',
          f: 'acquire',
          value: { code: 'backend-unavailable' },
          error:
            'BackendUnavailableError: redis unavailable: not connected to Sentinel master "fencekit": Connection is closed.',
        });
      }
    }
  }
  return events.sort((a, b) => a.time - b.time).map((e, index) => ({ index, ...e }));
}

async function liveness(history: HistoryEvent[]) {
  const checker = checkersFor(plan).liveness;
  if (checker === undefined) throw new Error('no liveness checker for inventory');
  return checker(history);
}

describe("liveness: nobody granted after the final heal ('unavailable-after-heal')", () => {
  it('convicts a run whose acquires all failed from the fault through the recovery phase', async () => {
    const result = await liveness(run(() => 'unavailable'));
    expect(result.verdict).toBe('illegal');
    expect(result.violations).toEqual([
      expect.objectContaining({ kind: 'unavailable-after-heal', processes: CLIENTS, granted: 0 }),
    ]);
    expect(String((result.violations[0] as { message?: unknown }).message)).toMatch(
      /no acquire granted .* after the final heal .*Connection is closed/,
    );
  });

  it('passes a run whose clients fail during the fault and are granted again after the heal', async () => {
    const result = await liveness(run((t) => (t < 3.5 ? 'unavailable' : 'ok')));
    expect(result.verdict).toBe('ok');
  });

  it('does not count failures within the settle after the heal (the backend recovering)', async () => {
    // redis-sentinel's settle is one TTL (1 s here): granted again from 3.9 s on.
    const result = await liveness(run((t) => (t < 3.9 ? 'unavailable' : 'ok')));
    expect(result.verdict).toBe('ok');
  });

  it('convicts one process refused all its acquires after the heal while the others are granted', async () => {
    // The pre-fix run of 23:21 UTC (seed 11): process 5 refused 1063 times "Connection is closed.", 4 granted.
    const result = await liveness(run((t, p) => (t < 3.5 || p === 2 ? 'unavailable' : 'ok')));
    expect(result.verdict).toBe('illegal');
    expect(result.violations).toEqual([
      expect.objectContaining({ kind: 'client-unavailable-after-heal', process: 2 }),
    ]);
  });

  it('judges nothing when the last fault is never healed', async () => {
    const history = run(() => 'unavailable').filter((e) => !(e.process === 'nemesis' && e.f === 'stop'));
    const result = await liveness(history);
    expect(
      result.violations.filter((v) => (v as { kind?: string }).kind === 'unavailable-after-heal'),
    ).toEqual([]);
  });
});
