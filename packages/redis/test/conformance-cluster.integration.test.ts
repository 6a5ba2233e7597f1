import { randomUUID } from 'node:crypto';
import { RedisLockClient } from '@fencekit/redis';
import { Cluster as RedisCluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { clusterConnection } from './support/deployments.js';
import { describeReplicatedRedis } from './support/replicated-suite.js';

// Three primaries with a replica each (@fencekit/cluster's redis-cluster), for this file alone.
const started = describeReplicatedRedis({
  topology: 'redis-cluster',
  name: 'redis Cluster',
  connect: clusterConnection,
  wakeUp: 'SPUBLISH on the node owning the slot, SSUBSCRIBEd there',
  replicasPerPrimary: 1,
});

describe("redis-cluster: a caller's own ioredis Cluster", () => {
  it('is the connection the client uses (keys on the slot primary, a waiter handed the lock), left open by close()', async () => {
    const { cluster: seeds, options } = clusterConnection(started());
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
