import { describe, expect, it } from 'vitest';
import {
  jainIndex,
  measureContended,
  measureContendedPermits,
  measureInterleaved,
  median,
  percentile,
} from '../src/bench/index.js';
import {
  MemoryLockClient,
  MemoryLockServer,
  MemoryPermitServer,
  MemorySharedLockClient,
} from '../src/index.js';

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

  it('measures a contended ring on a semaphore: N holders at a time, handoffs paired with the release that made room', async () => {
    const server = new MemoryPermitServer();
    const clients = Array.from({ length: 6 }, () => new MemorySharedLockClient({ server }));
    let holding = 0;
    let most = 0;
    const result = await measureContendedPermits(
      clients.map((client) => ({
        async lock(resource: string) {
          const lease = await client
            .semaphore(resource, { permits: 2 })
            .acquire({ ttlMs: 5_000, waitMs: 5_000 });
          holding += 1;
          most = Math.max(most, holding);
          return () => {
            holding -= 1;
            return lease.release();
          };
        },
      })),
      'ring',
      { seconds: 0.2, holdMs: 1, permits: 2 },
    );
    await Promise.all(clients.map((c) => c.close()));
    expect(most).toBe(2);
    const grants = result.grantsPerClient.reduce((a, b) => a + b, 0);
    expect(grants).toBeGreaterThan(10);
    // Strict FIFO: nobody is granted ahead of a client that asked before it.
    expect(result.overtakes).toBe(0);
    expect(result.handoffs.length).toBeGreaterThan(grants / 2);
    expect(Math.min(...result.handoffs)).toBeGreaterThanOrEqual(0);
    expect(result.jain).toBeGreaterThan(0.9);
  });

  it('counts the overtakes of a semaphore whose releasing holder takes the permit straight back', async () => {
    // One permit, polled every 5 ms by whoever waits; a release frees it at once, so the holder's
    // next lock() finds it free while the other client sleeps.
    let held = false;
    const take = async (): Promise<() => Promise<void>> => {
      while (held) await new Promise((resolve) => setTimeout(resolve, 5));
      held = true;
      return async () => {
        held = false;
      };
    };
    const result = await measureContendedPermits([{ lock: take }, { lock: take }], 'polled', {
      seconds: 0.1,
      holdMs: 1,
      permits: 1,
    });
    expect(result.overtakes).toBeGreaterThan(0);
    // The waiting client is timed from a release until it got the permit, however many times the
    // holder took it back in between (here: until the holder stopped at the end).
    expect(Math.max(...result.handoffs)).toBeGreaterThan(20);
  });

  it('times no handoff when nobody was waiting at a release', async () => {
    const result = await measureContendedPermits([{ lock: async () => async () => undefined }], 'alone', {
      seconds: 0.05,
      holdMs: 1,
      permits: 1,
    });
    expect(result.grantsPerClient[0]).toBeGreaterThan(2);
    expect(result.handoffs).toEqual([]);
    expect(result.overtakes).toBe(0);
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
