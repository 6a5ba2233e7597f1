/** Nearest-rank percentile of `samples` (q in [0, 1]); NaN when there are none. */
export function percentile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 0.5);
}

/**
 * Jain's fairness index over per-client counts: 1 when every client got the same, 1/n when one
 * client got everything. NaN when nobody got anything (fairness is undefined, not perfect).
 */
export function jainIndex(counts: readonly number[]): number {
  let sum = 0;
  let squares = 0;
  for (const c of counts) {
    sum += c;
    squares += c * c;
  }
  return squares === 0 ? Number.NaN : (sum * sum) / (counts.length * squares);
}
