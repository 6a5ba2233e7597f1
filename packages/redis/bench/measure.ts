import { type ContendedResult, measureContended, percentile } from '@fencekit/core/bench';
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
  const resources = contenders.map((_, i) => `${tag}-u${i}`);
  try {
    // Warm-up: connections, scripts loaded, code paths compiled.
    for (const [i, locker] of lockers.entries()) {
      for (let k = 0; k < 200; k++) await (await locker.lock(resources[i] as string))();
    }
    const latencies = lockers.map((): number[] => []);
    const spent = lockers.map(() => 0);
    const passes = Math.max(1, Math.ceil((seconds * 1000) / sliceMs));
    for (let pass = 0; pass < passes; pass++) {
      for (let k = 0; k < lockers.length; k++) {
        const i = (pass + k) % lockers.length;
        const locker = lockers[i];
        const mine = latencies[i];
        const resource = resources[i];
        if (!locker || !mine || resource === undefined) continue;
        const start = performance.now();
        const end = start + sliceMs;
        let now = start;
        while (now < end) {
          await (await locker.lock(resource))();
          const done = performance.now();
          mine.push(done - now);
          now = done;
        }
        spent[i] = (spent[i] ?? 0) + (now - start);
      }
    }
    return new Map(
      contenders.map((c, i) => {
        const mine = latencies[i] ?? [];
        return [
          c,
          {
            opsPerSecond: (mine.length * 1000) / (spent[i] ?? 1),
            p50Ms: percentile(mine, 0.5),
            p99Ms: percentile(mine, 0.99),
          },
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
