import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { describeReadWriteLockConformance, describeSemaphoreConformance } from '@fencekit/core/testing';
import { RedisSharedLockClient } from '@fencekit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterConnection, providerFromEnv } from './support/deployments.js';

// Three primaries with a replica each, for this file alone: the shared locks' wake-ups are sharded
// (SPUBLISH by the script on the slot's node, SSUBSCRIBEd there), which only a Cluster exercises.
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

function connection() {
  if (cluster === undefined) throw new Error('the redis-cluster did not start');
  return clusterConnection(cluster);
}

const createClient = async () => new RedisSharedLockClient({ connection: connection() });
// A waiter's first acquire opens a sharded subscriber per primary: slower than one connection.
describeSemaphoreConformance('redis Cluster', { createClient, ttlMs: 500, timeScale: 3 });
describeReadWriteLockConformance('redis Cluster', { createClient, ttlMs: 500, timeScale: 3 });

describe('redis-cluster: shared-lock wake-ups', () => {
  it('a parked waiter is handed its permit by the release (SPUBLISH), not by its 20 s heartbeat', async () => {
    const options = { connection: connection(), waiterTtlMs: 60_000 };
    const [holder, waiter] = [new RedisSharedLockClient(options), new RedisSharedLockClient(options)];
    try {
      // Several names, so that more than one shard's node is involved.
      for (let i = 0; i < 3; i++) {
        const name = `shared-wake-${i}-${randomUUID()}`;
        const held = await holder.semaphore(name, { permits: 1 }).acquire({ ttlMs: 30_000 });
        const waiting = waiter.semaphore(name, { permits: 1 }).acquire({ ttlMs: 10_000, waitMs: 15_000 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await held.release();
        const lease = await waiting;
        expect(lease.fence).toBeGreaterThan(held.fence);
        await lease.release();
      }
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  }, 60_000);
});
