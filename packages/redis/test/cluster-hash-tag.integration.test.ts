// #14 MEDIUM 11: on Redis Cluster a resource name starting with "}" leaves its keys without a hash
// tag (`prefix{}x}:lock`), in different slots: every script failed with CROSSSLOT, reported as
// BackendUnavailableError. Such names are refused there as the bad argument they are; every other
// name, braces included, locks (its keys share the tag); on one node they all keep working.
import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { InvalidArgumentError } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterConnection, providerFromEnv } from './support/deployments.js';
import { redisEndpoint } from './support/endpoint.js';

describe('resource names with braces', () => {
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

  it('on Redis Cluster: "}x" is refused with InvalidArgumentError; "x}", "{x", "{}", "a}b{c" lock and release', async () => {
    if (cluster === undefined) throw new Error('the redis-cluster did not start');
    const client = new RedisLockClient({ connection: clusterConnection(cluster) });
    try {
      const id = randomUUID();
      for (const name of [`}${id}`, `}}${id}`]) {
        await expect(client.acquire(name, { ttlMs: 5_000, waitMs: 1_000 })).rejects.toBeInstanceOf(
          InvalidArgumentError,
        );
        await expect(client.tryAcquire(name, { ttlMs: 5_000 })).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      for (const name of [`${id}}`, `{${id}`, `{}${id}`, `a}b{c${id}`, `fencekit:{${id}}:lock`]) {
        const lease = await client.acquire(name, { ttlMs: 5_000, waitMs: 5_000 });
        await lease.release();
      }
    } finally {
      await client.close();
    }
  });

  it('on one node "}x" keeps its keys and locks as before', async () => {
    const client = new RedisLockClient({ connection: `redis://${redisEndpoint()}` });
    try {
      const name = `}${randomUUID()}`;
      const lease = await client.acquire(name, { ttlMs: 5_000, waitMs: 1_000 });
      expect(await client.redis.exists(`fencekit:{${name}}:lock`)).toBe(1);
      await lease.release();
    } finally {
      await client.close();
    }
  });
});
