import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { ClientClosedError } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerFromEnv, sentinelConnection } from './support/deployments.js';
import { watchOpenResources } from './support/open-resources.js';

/**
 * close() of a client that follows the primary with ioredis' `failoverDetector` (a subscription to
 * `+switch-master` on every Sentinel, as the harness and applications configured for failover use).
 * ioredis tears those Sentinel connections down only in `disconnect()`, never after an answered QUIT:
 * a closed client kept up to six of them open (command and wake-up connections), so the process never
 * exited (#17: harness clients "did not stop within 18000 ms" in 34 of 35 runs).
 */
const CLIENT_CODE = /packages\/(redis|core)\/src\/|node_modules\/ioredis\//;
/** Long enough for the runtime to report closed handles and cleared timers, far below ioredis' 2 s. */
const CLOSED_GRACE_MS = 100;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until `count` waiters are queued, asked over the client's own connection (no helper socket). */
async function untilQueuedOn(c: RedisLockClient, resource: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Number(await c.redis.zcard(`fencekit:{${resource}}:queue`)) < count) {
    if (Date.now() > deadline) throw new Error(`${count} waiters not queued on ${resource} within 10 s`);
    await sleep(5);
  }
}

describe('redis-sentinel: close() with failoverDetector', () => {
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

  const client = () =>
    new RedisLockClient({
      connection: { ...sentinelConnection(cluster as Cluster), failoverDetector: true },
    });

  it('leaves no Sentinel connection, socket or timer open once it resolves', async () => {
    const resources = watchOpenResources(CLIENT_CODE);
    const holder = client();
    const waiter = client();
    const resource = `sentinel-close-${randomUUID()}`;
    try {
      await holder.acquire(resource, { ttlMs: 30_000 });
      // Subscribed and queued: the waiter's wake-up connection (a duplicate, with its own detector) is up too.
      const waiting = waiter
        .acquire(resource, { ttlMs: 5_000, waitMs: 60_000 })
        .catch((error: unknown) => error);
      await untilQueuedOn(holder, resource, 1);
      await Promise.all([holder.close(), waiter.close()]);
      await sleep(CLOSED_GRACE_MS);
      expect(resources.open()).toEqual([]);
      expect(await waiting).toBeInstanceOf(ClientClosedError);
    } finally {
      resources.stop();
      await Promise.all([holder.close(), waiter.close()]);
    }
  }, 60_000);

  it('leaves nothing open when closed with the primary killed', async () => {
    const deployment = cluster as Cluster;
    const resources = watchOpenResources(CLIENT_CODE);
    const c = client();
    const resource = `sentinel-close-killed-${randomUUID()}`;
    try {
      const lease = await c.acquire(resource, { ttlMs: 30_000 });
      await lease.release();
      const primary = await deployment.leader();
      await deployment.faults.failover({ how: 'kill', ...(primary ? { node: primary } : {}) });
      await c.close();
      await sleep(CLOSED_GRACE_MS);
      expect(resources.open()).toEqual([]);
    } finally {
      resources.stop();
      await c.close();
      await deployment.faults.heal();
    }
  }, 120_000);
});
