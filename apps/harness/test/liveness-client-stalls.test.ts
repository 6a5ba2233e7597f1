import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { clientStallFaults, livenessWithStalls } from '../src/check/checkers.js';
import { watchStalls } from '../src/client/stalls.js';

/**
 * Issue #13: at a 50 ms TTL on etcd with no fault, liveness convicted the unmutated adapter in 2-5 of 5
 * seeds: every starved stretch was acquires failing "etcd session expired at once", and the clients
 * measured 56-100 stalls of their own event loops of 50 ms or more per 10 s run (longest 270-507 ms,
 * load 16-25). A client that does not run for a TTL cannot keep a lease; such stalls are excused like a
 * paused client, and a run with any outside the nemesis's faults never passes liveness.
 */
const s = 1e9;
const options = { boundMs: 2_000, settleMs: 1_000 };

/** One waiter asking from `from` to `to` (s) for a lock nobody holds, and its client's close op with `stalls`. */
function waited(
  from: number,
  to: number,
  stalls: [number, number][],
  extra: Omit<HistoryEvent, 'index'>[] = [],
) {
  const events: Omit<HistoryEvent, 'index'>[] = [
    { time: from * s, process: 1, type: 'invoke', f: 'acquire', value: { resource: 'r', waitMs: 10_000 } },
    { time: to * s, process: 1, type: 'fail', f: 'acquire', value: { code: 'timeout' }, error: 'timed out' },
    ...extra,
    { time: (to + 1) * s, process: 1, type: 'invoke', f: 'close', value: { boundMs: 5000, stalls } },
    { time: (to + 1.1) * s, process: 1, type: 'ok', f: 'close', value: null },
  ];
  return events.sort((a, b) => a.time - b.time).map((e, index) => ({ index, ...e }));
}

describe('liveness with the clients’ own stalls', () => {
  it('convicts 3 s of waiting with no stall (the bound holds as before)', () => {
    expect(livenessWithStalls(waited(1, 4, []), options, 1_000).verdict).toBe('illegal');
  });

  it('does not pass a run whose starved stretch was a client stall of at least the TTL: unknown, saying why', () => {
    const result = livenessWithStalls(waited(1, 4, [[1.2 * s, 2_500]]), options, 1_000);
    expect(result.verdict).toBe('unknown');
    expect(result.error).toMatch(/judged only between 1 client stall/);
    expect(result.stats).toMatchObject({
      clientStalls: 1,
      clientStallsOutsideFaults: 1,
      longestClientStallMs: 0,
    });
  });

  it('does not excuse a stall shorter than the TTL', () => {
    expect(livenessWithStalls(waited(1, 4, [[1.2 * s, 900]]), options, 1_000).verdict).toBe('illegal');
  });

  it('still convicts waiting past the bound between stalls (a lock stuck for good)', () => {
    const result = livenessWithStalls(waited(1, 8, [[1.2 * s, 1_000]]), options, 1_000);
    expect(result.verdict).toBe('illegal');
  });

  it('passes a run with a stall outside the faults that passes without the excuse too', () => {
    const result = livenessWithStalls(waited(1, 2.5, [[1.2 * s, 1_100]]), options, 1_000);
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ clientStalls: 1, clientStallsOutsideFaults: 1 });
  });

  it('passes a run whose only stall was inside a fault of the nemesis (a SIGSTOPped client)', () => {
    const pause: Omit<HistoryEvent, 'index'>[] = [
      { time: 1 * s, process: 'nemesis', type: 'invoke', f: 'start', value: { fault: 'pause-client' } },
      {
        time: 1 * s,
        process: 'nemesis',
        type: 'ok',
        f: 'start',
        value: { fault: 'pause-client', client: 1 },
      },
      { time: 3 * s, process: 'nemesis', type: 'ok', f: 'stop', value: { fault: 'pause-client' } },
    ];
    const result = livenessWithStalls(waited(1, 3.5, [[1 * s, 2_000]], pause), options, 1_000);
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ clientStalls: 1, clientStallsOutsideFaults: 0 });
  });

  it('reads the stalls from the close ops as faults of the client’s own process', () => {
    const { events, count } = clientStallFaults(waited(1, 4, [[2 * s, 1_500]]), 1_000);
    expect(count).toBe(1);
    expect(events.map((e) => [e.type, e.f, e.time])).toEqual([
      ['invoke', 'start', 2 * s],
      ['ok', 'start', 2 * s],
      ['ok', 'stop', 3.5 * s],
    ]);
  });
});

it('measures a stall of the client’s own event loop, on the history’s clock', async () => {
  const watch = watchStalls(50);
  await new Promise((resolve) => setTimeout(resolve, 30));
  const before = Number(process.hrtime.bigint());
  const busyUntil = performance.now() + 150;
  while (performance.now() < busyUntil) {
    // the event loop runs nothing meanwhile, as under a loaded scheduler
  }
  await new Promise((resolve) => setTimeout(resolve, 30));
  const { stalls, longestMs } = watch.stop();
  const long = stalls.filter(([, ms]) => ms >= 100);
  expect(long.length).toBeGreaterThanOrEqual(1);
  expect(long[0]![0]).toBeGreaterThanOrEqual(before - 20e6);
  expect(longestMs).toBeGreaterThanOrEqual(100);
});
