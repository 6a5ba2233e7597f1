import { InvalidArgumentError } from '@fencekit/core';
import { defaultNodeTimeout, driftFor, fullJitter } from '@fencekit/redlock';
import { describe, expect, it } from 'vitest';

describe('Redlock timing', () => {
  it('allows ttl × 1 % + 2 ms of drift by default', () => {
    expect(driftFor(0.01, 2)(10_000)).toBe(102);
    expect(() => driftFor(1.5, 2)).toThrow(InvalidArgumentError);
    expect(() => driftFor(0.01, -1)).toThrow(InvalidArgumentError);
  });

  it('keeps the per-node timeout a small fraction of the TTL', () => {
    expect(defaultNodeTimeout(10_000)).toBe(100);
    expect(defaultNodeTimeout(1_000)).toBe(50);
    expect(defaultNodeTimeout(20)).toBe(5);
  });

  it('draws full-jitter delays within [0, min(cap, base × 2^attempt)]', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      for (let i = 0; i < 50; i++) {
        const delay = fullJitter(attempt, 10, 250);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(Math.min(250, 10 * 2 ** attempt));
      }
    }
  });
});
