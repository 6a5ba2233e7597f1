/** One cycle of one contender (e.g. lock + unlock); resolves when it is done. */
export type BenchCycle = () => Promise<void>;

export interface InterleavedOptions {
  /** How long each contender runs in total. */
  readonly seconds: number;
  /** One turn of one contender; the turns rotate, so no contender always follows the same one. */
  readonly sliceMs: number;
  /** Cycles per contender before timing starts (connections, scripts, JIT). */
  readonly warmup: number;
  /** Which contender goes first in the first pass (callers running several rounds vary it). */
  readonly firstTurn?: number;
}

export interface InterleavedResult {
  /** Every cycle's time (ms), for percentiles pooled over rounds. */
  readonly cycles: number[];
  readonly cyclesPerSecond: number;
}

/**
 * The uncontended race: one client per contender, its cycle run back to back, the contenders taking
 * turns in short slices for `seconds` each. Load from other processes then falls on all of them
 * alike, so the ratio of two contenders' rates within one call is much steadier than either rate.
 */
export async function measureInterleaved(
  contenders: readonly BenchCycle[],
  options: InterleavedOptions,
): Promise<InterleavedResult[]> {
  for (const cycle of contenders) for (let i = 0; i < options.warmup; i++) await cycle();
  const cycles = contenders.map((): number[] => []);
  const spent = contenders.map(() => 0);
  const passes = Math.max(1, Math.ceil((options.seconds * 1000) / options.sliceMs));
  for (let pass = 0; pass < passes; pass++) {
    for (let k = 0; k < contenders.length; k++) {
      const index = ((options.firstTurn ?? 0) + pass + k) % contenders.length;
      const cycle = contenders[index] as BenchCycle;
      const mine = cycles[index] as number[];
      const start = performance.now();
      const end = start + options.sliceMs;
      let now = start;
      while (now < end) {
        await cycle();
        const done = performance.now();
        mine.push(done - now);
        now = done;
      }
      spent[index] = (spent[index] as number) + (now - start);
    }
  }
  return cycles.map((mine, index) => ({
    cycles: mine,
    cyclesPerSecond: (mine.length * 1000) / Math.max(1e-9, spent[index] as number),
  }));
}
