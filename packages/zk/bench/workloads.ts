import {
  type BenchLocker,
  type ContendedResult,
  type InterleavedResult,
  measureContended,
  measureInterleaved,
  percentile,
} from '@fencekit/core/bench';
import type { Cycle } from './cycles.js';

export interface UncontendedSeries {
  /** Cycles per second, one figure per round. */
  rates: number[];
  /** Every cycle's duration, ms. */
  durations: number[];
}

export interface Ring {
  readonly lockers: readonly BenchLocker[];
  readonly resource: string;
}

/**
 * Every contender measured in every round, back to back in blocks (the first turn moving on every
 * round), and each ring competing for `contendedSeconds` per round too: on a shared machine,
 * background load then falls on all of them alike, and a ratio taken within one round compares
 * figures measured seconds apart.
 */
export async function runRounds(
  cycles: Record<string, Cycle>,
  rings: Record<string, Ring>,
  options: { rounds: number; blockMs: number; contendedSeconds: number; holdMs: number; warmup: number },
): Promise<{ uncontended: Record<string, UncontendedSeries>; contended: Record<string, ContendedResult[]> }> {
  const names = Object.keys(cycles);
  const ringNames = Object.keys(rings);
  const uncontended: Record<string, UncontendedSeries> = {};
  const contended: Record<string, ContendedResult[]> = {};
  for (const name of names) uncontended[name] = { rates: [], durations: [] };
  for (const name of ringNames) contended[name] = [];
  for (let round = 0; round < options.rounds; round++) {
    const forward = round % 2 === 0;
    // One slice of blockMs per contender per round; the first turn moves on every round.
    const results = await measureInterleaved(
      names.map((name) => () => (cycles[name] as Cycle).once()),
      {
        seconds: options.blockMs / 1000,
        sliceMs: options.blockMs,
        warmup: round === 0 ? options.warmup : 0,
        firstTurn: round,
      },
    );
    for (const [i, name] of names.entries()) {
      const series = uncontended[name] as UncontendedSeries;
      const result = results[i] as InterleavedResult;
      series.durations.push(...result.cycles);
      series.rates.push(result.cyclesPerSecond);
    }
    for (const name of forward ? ringNames : [...ringNames].reverse()) {
      const ring = rings[name] as Ring;
      const result = await measureContended(ring.lockers, ring.resource, {
        seconds: options.contendedSeconds,
        holdMs: options.holdMs,
      });
      contended[name]?.push(result);
    }
  }
  return { uncontended, contended };
}

/** Pools the rounds of one ring: handoff percentiles over every handoff, grants summed per client. */
export function pool(results: readonly ContendedResult[]): {
  grantsPerSecond: number;
  handoffP50Ms: number;
  handoffP99Ms: number;
  handoffs: number;
  grantsPerClient: number[];
} {
  const handoffs = results.flatMap((r) => r.handoffs);
  const clients = results[0]?.grantsPerClient.length ?? 0;
  const grantsPerClient = Array.from({ length: clients }, (_, c) =>
    results.reduce((sum, r) => sum + (r.grantsPerClient[c] ?? 0), 0),
  );
  return {
    grantsPerSecond: results.reduce((sum, r) => sum + r.grantsPerSecond, 0) / Math.max(1, results.length),
    handoffP50Ms: percentile(handoffs, 0.5),
    handoffP99Ms: percentile(handoffs, 0.99),
    handoffs: handoffs.length,
    grantsPerClient,
  };
}
