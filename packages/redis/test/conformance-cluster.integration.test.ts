import { type Cluster, startCluster } from '@fencekit/cluster';
import { describeLockConformance } from '@fencekit/core/testing';
import { RedisLockClient } from '@fencekit/redis';
import { afterAll, beforeAll } from 'vitest';
import { clusterConnection } from './support/deployments.js';

// Three primaries with a replica each (@fencekit/cluster's redis-cluster), for this file alone.
let cluster: Cluster | undefined;
beforeAll(async () => {
  cluster = await startCluster({ topology: 'redis-cluster', startTimeoutMs: 90_000 });
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
