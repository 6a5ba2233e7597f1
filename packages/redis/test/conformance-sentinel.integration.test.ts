import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { describeLockConformance } from '@fencekit/core/testing';
import { BackendUnavailableError, RedisLockClient } from '@fencekit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerFromEnv, sentinelConnection } from './support/deployments.js';

// A primary, two replicas and three Sentinels (@fencekit/cluster's redis-sentinel), for this file alone.
let cluster: Cluster | undefined;
beforeAll(async () => {
  cluster = await startCluster({
    topology: 'redis-sentinel',
    provider: providerFromEnv(),
    startTimeoutMs: 90_000,
  });
}, 120_000);
afterAll(async () => {
  await cluster?.close();
}, 60_000);

describeLockConformance('redis through Sentinel', {
  createClient: async () => {
    if (cluster === undefined) throw new Error('the redis-sentinel cluster did not start');
    return new RedisLockClient({ connection: sentinelConnection(cluster) });
  },
  capabilities: { safeFences: true, fair: true, blocking: true, expiry: true, cleanClose: true },
  ttlMs: 500,
  // A waiter's first acquire opens its subscriber (through the Sentinels, or one per primary): at a
  // load of 30 it took longer than the fair-order check's 100 ms between arrivals.
  timeScale: 3,
});

describeLockConformance('redis through Sentinel, epoch fences', {
  createClient: async () => {
    if (cluster === undefined) throw new Error('the redis-sentinel cluster did not start');
    return new RedisLockClient({ connection: sentinelConnection(cluster), fence: 'epoch' });
  },
  capabilities: { safeFences: true, fair: true, blocking: true, expiry: true, cleanClose: true },
  ttlMs: 500,
  // A waiter's first acquire opens its subscriber (through the Sentinels, or one per primary): at a
  // load of 30 it took longer than the fair-order check's 100 ms between arrivals.
  timeScale: 3,
});

describe('redis-sentinel: wake-ups and WAIT', () => {
  it('a waiter is woken by the release (PUBLISH on the client channel, its subscriber found by the Sentinels), not by its 20 s heartbeat', async () => {
    if (cluster === undefined) throw new Error('the redis-sentinel cluster did not start');
    const options = { connection: sentinelConnection(cluster), waiterTtlMs: 60_000 };
    const [holder, waiter] = [new RedisLockClient(options), new RedisLockClient(options)];
    try {
      // Several resources, so that (in a Cluster) more than one shard's node is involved.
      for (let i = 0; i < 3; i++) {
        const resource = `wake-${randomUUID()}`;
        const held = await holder.acquire(resource, { ttlMs: 60_000 });
        const waiting = waiter.acquire(resource, { ttlMs: 60_000, waitMs: 30_000 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        const releasedAt = performance.now();
        await held.release();
        const lease = await waiting;
        // The lock's TTL is 60 s and the waiter's heartbeat 20 s: only the wake-up message is this fast.
        expect(performance.now() - releasedAt).toBeLessThan(10_000);
        expect(lease.fence).toBeGreaterThan(held.fence);
        await lease.release();
      }
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  }, 120_000);

  it('replicas: WAIT on the primary that made the grant; too many asked for fails the acquire', async () => {
    if (cluster === undefined) throw new Error('the redis-sentinel cluster did not start');
    const enough = new RedisLockClient({
      connection: sentinelConnection(cluster),
      replicas: { count: 2, timeoutMs: 5_000 },
    });
    const tooMany = new RedisLockClient({
      connection: sentinelConnection(cluster),
      replicas: { count: 4, timeoutMs: 200 },
    });
    try {
      const resource = `wait-${randomUUID()}`;
      const lease = await enough.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 });
      await lease.release();
      const refused = await tooMany
        .acquire(resource, { ttlMs: 10_000, waitMs: 10_000 })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BackendUnavailableError);
      expect((refused as Error).message).toMatch(/only 2 of 4 replicas acknowledged/);
      // The grant was given back: the lock is free again.
      await (await enough.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 })).release();
    } finally {
      await Promise.all([enough.close(), tooMany.close()]);
    }
  }, 120_000);
});
