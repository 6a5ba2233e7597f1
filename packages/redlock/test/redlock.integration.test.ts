import { randomUUID } from 'node:crypto';
import { injectCluster } from '@fencekit/cluster/vitest';
import { LockAbortedError, LockTimeoutError } from '@fencekit/core';
import { RedlockClient } from '@fencekit/redlock';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { untilQueued } from '../../redis/test/support/queue.js';

const { endpoints } = injectCluster('redlock');
const clients: RedlockClient[] = [];

function client(): RedlockClient {
  const c = new RedlockClient({ nodes: endpoints.map((e) => `redis://${e}`), nodeTimeoutMs: 250 });
  clients.push(c);
  return c;
}

function resource(): string {
  return `test-${randomUUID()}`;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('RedlockClient', () => {
  it('grants on a quorum with validity reduced by elapsed time and drift, and no fence', async () => {
    const [a, b] = [client(), client()];
    expect(a.quorum).toBe(3);
    const r = resource();
    const before = performance.now();
    const lease = await a.acquire(r, { ttlMs: 10_000 });
    expect(lease.fence).toBeUndefined();
    // drift = 10 000 × 1 % + 2 ms
    expect(lease.validUntil).toBeLessThanOrEqual(performance.now() + 10_000 - 102);
    expect(lease.validUntil).toBeGreaterThan(before + 10_000 - 102 - 1_000);
    expect(await b.tryAcquire(r, { ttlMs: 1_000 })).toBeNull();
    await lease.extend(10_000);
    await lease.release();
    const next = await b.tryAcquire(r, { ttlMs: 1_000 });
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('hands the lock to waiters in arrival order', async () => {
    const holder = client();
    const r = resource();
    const lease = await holder.acquire(r, { ttlMs: 10_000 });
    const order: number[] = [];
    const pending: Promise<void>[] = [];
    for (const [i, w] of [client(), client(), client()].entries()) {
      pending.push(
        w.acquire(r, { ttlMs: 10_000, waitMs: 10_000 }).then(async (l) => {
          order.push(i);
          await l.release();
        }),
      );
      // The next waiter arrives only once this one is in line.
      await untilQueued(endpoints[0] as string, r, i + 1);
    }
    await lease.release();
    await Promise.all(pending);
    expect(order).toEqual([0, 1, 2]);
  });

  it('times out and aborts waiters without leaving a grant behind', async () => {
    const [a, b] = [client(), client()];
    const r = resource();
    const lease = await a.acquire(r, { ttlMs: 10_000 });
    await expect(b.acquire(r, { ttlMs: 1_000, waitMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    const controller = new AbortController();
    const waiting = b.acquire(r, { ttlMs: 1_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(waiting).rejects.toBeInstanceOf(LockAbortedError);
    await lease.release();
    const next = await a.tryAcquire(r, { ttlMs: 1_000 });
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('leaves the connections the caller owns open, and without its listeners, after close()', async () => {
    const owned = endpoints.map((e) => new Redis(`redis://${e}`));
    try {
      const listeners = owned.map((r) => [r.listenerCount('error'), r.listenerCount('ready')]);
      const c = new RedlockClient({ nodes: owned, nodeTimeoutMs: 250 });
      await (await c.acquire(resource(), { ttlMs: 2_000 })).release();
      await c.close();
      expect(owned.map((r) => [r.listenerCount('error'), r.listenerCount('ready')])).toEqual(listeners);
      expect(await Promise.all(owned.map((r) => r.ping()))).toEqual(owned.map(() => 'PONG'));
    } finally {
      for (const r of owned) r.disconnect();
    }
  });

  it('hands the lock over inside the release: the waiter is granted without another round', async () => {
    const holder = client();
    const waiting = new RedlockClient({ nodes: endpoints.map((e) => `redis://${e}`), waiterTtlMs: 30_000 });
    clients.push(waiting);
    const r = resource();
    const direct = endpoints.map((e) => new Redis(`redis://${e}`));
    try {
      const held = await holder.acquire(r, { ttlMs: 10_000 });
      const granted = waiting.acquire(r, { ttlMs: 10_000, waitMs: 10_000 });
      for (const e of endpoints) await untilQueued(e, r, 1);
      const scriptCalls = async () => {
        let calls = 0;
        for (const redis of direct) {
          const stats = await redis.info('commandstats');
          for (const m of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(m[1]);
        }
        return calls;
      };
      const before = await scriptCalls();
      await held.release();
      const lease = await granted;
      // Let the release reach the slowest nodes too.
      await new Promise((resolve) => setTimeout(resolve, 200));
      // One release script per node, and nothing from the waiter: its grant came with the release.
      expect((await scriptCalls()) - before).toBe(endpoints.length);
      for (const redis of direct) expect(await redis.get(`fencekit:{${r}}:lock`)).toBe(lease.owner);
      expect(lease.held).toBe(true);
      await lease.release();
      for (const redis of direct) expect(await redis.exists(`fencekit:{${r}}:lock`)).toBe(0);
    } finally {
      for (const redis of direct) redis.disconnect();
    }
  });
});
