import {
  InvalidArgumentError,
  normalizeSemaphoreAcquire,
  normalizeSemaphoreTryAcquire,
} from '@fencekit/core';
import { describe, expect, it } from 'vitest';

describe('semaphore acquire validation', () => {
  it('defaults an absent permits to 1 but refuses null, as it refuses any other non-count', () => {
    expect(normalizeSemaphoreAcquire('s', 3, { ttlMs: 1_000 }).permits).toBe(1);
    expect(normalizeSemaphoreAcquire('s', 3, { ttlMs: 1_000, permits: undefined }).permits).toBe(1);
    expect(normalizeSemaphoreTryAcquire('s', 3, { ttlMs: 1_000 }).permits).toBe(1);
    const options = { ttlMs: 1_000, permits: null } as unknown as { ttlMs: number };
    expect(() => normalizeSemaphoreAcquire('s', 3, options)).toThrow(InvalidArgumentError);
    expect(() => normalizeSemaphoreTryAcquire('s', 3, options)).toThrow(InvalidArgumentError);
  });
});
