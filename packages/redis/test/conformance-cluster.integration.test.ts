import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { describeLockConformance } from '@fencekit/core/testing';
import { BackendUnavailableError, RedisLockClient } from '@fencekit/redis';
import { Cluster as RedisCluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterConnection, providerFromEnv } from './support/deployments.js';

// Three primaries with a replica each (@fencekit/cluster's redis-cluster), for this file alone.
let cluster: Cluster | undefined;
beforeAll(async () => {
  cluster = await startCluster({
    topology: 'redis-cluster',
    provider: providerFromEnv(),
    startTimeoutMs: 90_000,
  });
}, 120_000);
afterAll(async () => {
  await cluster?.close();
}, 60_000);

describeLockConformance('redis Cluster', {
  createClient: async () => {
    if (cluster === undefined) throw new Error('the redis-cluster cluster did not start');
    return new RedisLockClient({ connection: clusterConnection(cluster) });
  },
  capabilities: { safeFences: true, fair: true, blocking: true, expiry: true, cleanClose: true },
  ttlMs: 500,
  // A waiter's first acquire opens its subscriber (through the Sentinels, or one per primary): at a
  // load of 30 it took longer than the fair-order check's 100 ms between arrivals.
  timeScale: 3,
});

describeLockConformance('redis Cluster, epoch fences', {
  createClient: async () => {
    if (cluster === undefined) throw new Error('the redis-cluster cluster did not start');
    return new RedisLockClient({ connection: clusterConnection(cluster), fence: 'epoch' });
  },
  capabilities: { safeFences: true, fair: true, blocking: true, expiry: true, cleanClose: true },
  ttlMs: 500,
  // A waiter's first acquire opens its subscriber (through the Sentinels, or one per primary): at a
  // load of 30 it took longer than the fair-order check's 100 ms between arrivals.
  timeScale: 3,
});

describe('redis-cluster: wake-ups and WAIT', () => {
  it('a waiter is woken by the release (SPUBLISH on the node owning the slot, SSUBSCRIBEd there), not by its 20 s heartbeat', async () => {
    if (cluster === undefined) throw new Error('the redis-cluster cluster did not start');
    const options = { connection: clusterConnection(cluster), waiterTtlMs: 60_000 };
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
    if (cluster === undefined) throw new Error('the redis-cluster cluster did not start');
    const enough = new RedisLockClient({
      connection: clusterConnection(cluster),
      replicas: { count: 1, timeoutMs: 5_000 },
    });
    const tooMany = new RedisLockClient({
      connection: clusterConnection(cluster),
      replicas: { count: 3, timeoutMs: 200 },
    });
    try {
      const resource = `wait-${randomUUID()}`;
      const lease = await enough.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 });
      await lease.release();
      const refused = await tooMany
        .acquire(resource, { ttlMs: 10_000, waitMs: 10_000 })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BackendUnavailableError);
      expect((refused as Error).message).toMatch(/only 1 of 3 replicas acknowledged/);
      // The grant was given back: the lock is free again.
      await (await enough.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 })).release();
    } finally {
      await Promise.all([enough.close(), tooMany.close()]);
    }
  }, 120_000);
});

describe("redis-cluster: a caller's own ioredis Cluster", () => {
  it('is the connection the client uses (keys on the slot primary, a waiter handed the lock), left open by close()', async () => {
    if (cluster === undefined) throw new Error('the redis-cluster cluster did not start');
    const { cluster: seeds, options } = clusterConnection(cluster);
    const own = new RedisCluster([...seeds], options);
    own.on('error', () => undefined);
    const client = new RedisLockClient({ connection: own, keyPrefix: 'own:' });
    try {
      expect(client.redis).toBe(own);
      const resource = `own-${randomUUID()}`;
      const lease = await client.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 });
      expect(await own.get(`own:{${resource}}:lock`)).toBe(lease.owner);
      const waiting = client.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await lease.release();
      const next = await waiting;
      expect(next.fence).toBe(lease.fence + 1n);
      await next.release();
    } finally {
      await client.close();
    }
    expect(own.status).toBe('ready');
    expect(await own.set(`own:check-${randomUUID()}`, '1', 'PX', 1_000)).toBe('OK');
    await own.quit();
  }, 60_000);
});
