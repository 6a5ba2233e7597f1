import { InvalidArgumentError } from '@fencekit/core';
import { describe, expect, it } from 'vitest';
import { defaultNodeTimeout, driftFor } from '../src/timing.js';

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
});
