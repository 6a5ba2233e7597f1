/** Nearest-rank percentile of `samples` (ms); NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Jain's fairness index over per-client grant counts: 1 = perfectly even, 1/n = one client took all. */
export function jain(counts: readonly number[]): number {
  const sum = counts.reduce((a, b) => a + b, 0);
  const sumOfSquares = counts.reduce((a, b) => a + b * b, 0);
  return sumOfSquares === 0 ? Number.NaN : (sum * sum) / (counts.length * sumOfSquares);
}
