import type { Contender } from './contenders.js';

export interface Uncontended {
  /** acquire + release cycles per second, one client, back to back. */
  cyclesPerSecond: number;
  /** Every cycle's time (ms), for percentiles pooled over rounds. */
  cycles: number[];
}

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
    // Warm-up: connections to every member, sessions granted, code paths compiled.
    for (const locker of lockers) for (let i = 0; i < 30; i++) await (await locker.lock(resource))();
    const cycles = lockers.map((): number[] => []);
    const spent = lockers.map(() => 0);
    const passes = Math.max(1, Math.ceil((seconds * 1000) / sliceMs));
    for (let pass = 0; pass < passes; pass++) {
      for (let k = 0; k < lockers.length; k++) {
        const index = (pass + k) % lockers.length;
        const locker = lockers[index];
        const mine = cycles[index];
        if (!locker || !mine) continue;
        const start = performance.now();
        const end = start + sliceMs;
        let now = start;
        while (now < end) {
          const unlock = await locker.lock(resource);
          await unlock();
          const done = performance.now();
          mine.push(done - now);
          now = done;
        }
        spent[index] = (spent[index] ?? 0) + (now - start);
      }
    }
    return new Map(
      contenders.map((c, index) => {
        const mine = cycles[index] ?? [];
        return [c, { cyclesPerSecond: (mine.length * 1000) / (spent[index] ?? 1), cycles: mine }];
      }),
    );
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
