import { type InterleavedResult, measureInterleaved } from '@fencekit/core/bench';
import type { Contender } from './contenders.js';

/** acquire + release cycles per second, one client, back to back, and every cycle's time (ms). */
export type Uncontended = InterleavedResult;

/**
 * One round of the uncontended race: one client per contender locking and unlocking back to back,
 * the contenders taking turns in `sliceMs` slices (the order rotated every pass) for `seconds` each
 * in total. Load from other processes then hits every contender alike within the round, so the ratio
 * of two contenders' rates in one round is much steadier than either rate.
 */
export async function uncontendedRound(
  contenders: readonly Contender[],
  endpoints: readonly string[],
  resource: string,
  seconds: number,
  sliceMs: number,
): Promise<Map<Contender, Uncontended>> {
  const lockers = contenders.map((c) => c.open(endpoints));
  try {
    const results = await measureInterleaved(
      lockers.map((locker) => async () => (await locker.lock(resource))()),
      { seconds, sliceMs, warmup: 30 },
    );
    return new Map(contenders.map((c, index) => [c, results[index] as InterleavedResult]));
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
}

/** Round-trip times (ms) of one linearizable read: the unit "within 3 round trips" is counted in. */
export async function roundTrips(read: () => Promise<unknown>, samples: number): Promise<number[]> {
  for (let i = 0; i < 20; i++) await read();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await read();
    times.push(performance.now() - start);
  }
  return times;
}
