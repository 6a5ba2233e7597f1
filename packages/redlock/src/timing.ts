import { assertNonNegativeMs, InvalidArgumentError } from '@fencekit/core';

/**
 * How much of a lease's TTL to give up for clock drift between the nodes and this process: Redlock's
 * `ttl × factor + constant` (default 1 % + 2 ms).
 */
export function driftFor(factor: number, constantMs: number): (ttlMs: number) => number {
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 0 || factor >= 1) {
    throw new InvalidArgumentError('driftFactor', factor, 'a number in [0, 1)');
  }
  assertNonNegativeMs('driftConstantMs', constantMs);
  return (ttlMs) => ttlMs * factor + constantMs;
}

/** Default per-node timeout: a twentieth of the TTL, within [5, 100] ms. */
export function defaultNodeTimeout(ttlMs: number): number {
  return Math.max(5, Math.min(100, ttlMs / 20));
}
