import {
  type ContendedResult,
  type InterleavedResult,
  measureContended,
  measureInterleaved,
  percentile,
} from '@fencekit/core/bench';
import type { Contender } from './contenders.js';

export interface Uncontended {
  /** acquire + release pairs per second, one client, serially. */
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * One round of the uncontended race: one client per contender, acquire + release back to back on
 * its own resource, the contenders taking turns in `sliceMs` slices (order rotated every pass) for
 * `seconds` each in total. Load from other processes on the machine then hits every contender
 * alike, so ratios within a round are much steadier than the rates themselves.
 */
export async function measureUncontended(
  contenders: readonly Contender[],
  endpoints: readonly string[],
  tag: string,
  seconds: number,
  sliceMs = 250,
): Promise<Map<Contender, Uncontended>> {
  const lockers = contenders.map((c) => c.open(endpoints));
  try {
    const results = await measureInterleaved(
      lockers.map((locker, i) => async () => (await locker.lock(`${tag}-u${i}`))()),
      { seconds, sliceMs, warmup: 200 },
    );
    return new Map(
      contenders.map((c, i) => {
        const { cycles, cyclesPerSecond } = results[i] as InterleavedResult;
        return [
          c,
          { opsPerSecond: cyclesPerSecond, p50Ms: percentile(cycles, 0.5), p99Ms: percentile(cycles, 0.99) },
        ];
      }),
    );
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
}

/** `clients` clients of one contender on one resource (the shared contended ring of core/bench). */
export async function measureContendedRound(
  contender: Contender,
  endpoints: readonly string[],
  resource: string,
  seconds: number,
  clients: number,
  holdMs: number,
): Promise<ContendedResult> {
  const lockers = Array.from({ length: clients }, () => contender.open(endpoints));
  try {
    // Warm every client's connections (and scripts) before the clock starts.
    for (const locker of lockers) await (await locker.lock(resource))();
    return await measureContended(lockers, resource, { seconds, holdMs });
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
}
