import { describe, expect, it } from 'vitest';
import { jainIndex, measureContended, measureInterleaved, median, percentile } from '../src/bench/index.js';
import { MemoryLockClient, MemoryLockServer } from '../src/index.js';

describe('bench stats', () => {
  it('takes nearest-rank percentiles', () => {
    const samples = [5, 1, 4, 2, 3];
    expect(percentile(samples, 0)).toBe(1);
    expect(median(samples)).toBe(3);
    expect(percentile(samples, 0.99)).toBe(5);
    expect(percentile([], 0.5)).toBeNaN();
  });

  it('scores fairness from 1/n (one client got all) to 1 (even)', () => {
    expect(jainIndex([10, 10, 10, 10])).toBe(1);
    expect(jainIndex([40, 0, 0, 0])).toBe(0.25);
    expect(jainIndex([0, 0])).toBeNaN();
  });

  it('measures a contended ring of real lock clients', async () => {
    const server = new MemoryLockServer();
    const clients = [0, 1, 2].map(() => new MemoryLockClient({ server }));
    const result = await measureContended(
      clients.map((client) => ({
        async lock(resource: string) {
          const lease = await client.acquire(resource, { ttlMs: 5_000, waitMs: 5_000 });
          return () => lease.release();
        },
      })),
      'ring',
      { seconds: 0.2, holdMs: 1 },
    );
    await Promise.all(clients.map((c) => c.close()));
    expect(result.grantsPerClient.reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
    expect(result.handoffs.length).toBeGreaterThan(0);
    expect(result.jain).toBeGreaterThan(0.9);
  });

  it('times every contender of the interleaved race in turns, each for its share', async () => {
    const calls = [0, 0];
    const slow = async () => {
      calls[0] = (calls[0] ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, 2));
    };
    const fast = async () => {
      calls[1] = (calls[1] ?? 0) + 1;
    };
    const [a, b] = await measureInterleaved([slow, fast], { seconds: 0.1, sliceMs: 20, warmup: 3 });
    expect(a?.cycles.length).toBe((calls[0] ?? 0) - 3);
    expect(b?.cycles.length).toBe((calls[1] ?? 0) - 3);
    expect(b?.cyclesPerSecond).toBeGreaterThan(a?.cyclesPerSecond ?? Number.POSITIVE_INFINITY);
  });
});
