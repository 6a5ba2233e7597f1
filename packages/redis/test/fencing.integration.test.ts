import { randomUUID } from 'node:crypto';
import { MemoryFencedResource, StaleFenceError } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { afterEach, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';

const endpoint = redisEndpoint();
const clients: RedisLockClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(): RedisLockClient {
  const c = new RedisLockClient({ connection: `redis://${endpoint}` });
  clients.push(c);
  return c;
}

describe('fencing with @fencekit/redis', () => {
  it('a resource refuses the fence of a holder whose lease expired after another client acquired', async () => {
    const resource = `inventory-${randomUUID()}`;
    const store = new MemoryFencedResource<number>();
    const [paused, successor] = [client(), client()];

    // The first holder reads "1 left", then stalls (a GC pause) past its short lease.
    const stale = await paused.acquire(resource, { ttlMs: 500 });
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(stale.held).toBe(false);

    // Meanwhile the lock expired on the server and the successor got it with a higher fence.
    const fresh = await successor.acquire(resource, { ttlMs: 5_000, waitMs: 1_000 });
    expect(fresh.fence).toBeGreaterThan(stale.fence);
    await store.write('stock', 0, fresh.fence);

    // The paused holder wakes up and writes with its old fence: refused, the successor's write stays.
    const refusal = await store.write('stock', 0, stale.fence).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(StaleFenceError);
    expect((refusal as StaleFenceError).highestSeen).toBe(fresh.fence);
    expect((await store.read('stock'))?.fence).toBe(fresh.fence);
    await fresh.release();
  });

  it('fences keep increasing across grants by release, handoff and expiry', async () => {
    const resource = `fences-${randomUUID()}`;
    const [a, b] = [client(), client()];
    const fences: bigint[] = [];
    const first = await a.acquire(resource, { ttlMs: 5_000 });
    fences.push(first.fence);
    // Handed over by the release to a parked waiter.
    const waiting = b.acquire(resource, { ttlMs: 200, waitMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await first.release();
    const handed = await waiting;
    fences.push(handed.fence);
    // Granted after the handed-over lease expired without release.
    const afterExpiry = await a.acquire(resource, { ttlMs: 5_000, waitMs: 5_000 });
    fences.push(afterExpiry.fence);
    await afterExpiry.release();
    for (let i = 1; i < fences.length; i++) {
      expect(fences[i]).toBeGreaterThan(fences[i - 1] as bigint);
    }
  });
});
