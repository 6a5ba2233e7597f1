import { randomUUID } from 'node:crypto';
import { type Lease, RedisLockClient, RedisSharedLockClient } from '@fencekit/redis';
import { describe, expect, it } from 'vitest';
import { clusterConnection, ownDeployment } from './support/deployments.js';
import { watchOpenResources } from './support/open-resources.js';

/**
 * Issue #17 review, F3: close() after a Redis Cluster failover resolved with dozens of ioredis timers still
 * pending (101 with RedisLockClient, 37 with RedisSharedLockClient, gone ~3 s later): the wake-up subscriber's
 * sharded subscribers, each disconnected with ioredis' 2 s socket timer, and the slot refreshes their failed
 * connects schedule. The README promises that no timer or socket is left once close() resolves.
 */
const CLIENT_CODE = /packages\/(redis|core)\/src\/|node_modules\/ioredis\//;
/** Long enough for the runtime to report closed handles and cleared timers, far below ioredis' 2 s. */
const CLOSED_GRACE_MS = 100;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('redis-cluster: close() after a failover', () => {
  const deploymentOf = ownDeployment('redis-cluster');

  it('leaves no timer or socket of the clients (mutex and semaphore waiters) once it resolves', async () => {
    const deployment = deploymentOf();
    const connection = clusterConnection(deployment);
    const resources = watchOpenResources(CLIENT_CODE);
    const holder = new RedisLockClient({ connection, fence: 'epoch' });
    const waiter = new RedisLockClient({ connection, fence: 'epoch', waiterTtlMs: 3_000 });
    const sharedHolder = new RedisSharedLockClient({ connection });
    const sharedWaiter = new RedisSharedLockClient({ connection, waiterTtlMs: 3_000 });
    const names = Array.from({ length: 9 }, (_, i) => `cluster-close-${i}-${randomUUID()}`);
    const leases: Lease<bigint>[] = [];
    try {
      // Held on every shard, with a waiter parked on each: its sharded subscriber is up on every primary.
      for (const name of names) {
        leases.push(await holder.acquire(name, { ttlMs: 60_000, waitMs: 5_000 }));
        leases.push(
          await sharedHolder.semaphore(name, { permits: 1 }).acquire({ ttlMs: 60_000, waitMs: 5_000 }),
        );
      }
      const waits = names.flatMap((name) => [
        waiter.acquire(name, { ttlMs: 10_000, waitMs: 60_000 }).catch((error: unknown) => error),
        sharedWaiter
          .semaphore(name, { permits: 1 })
          .acquire({ ttlMs: 10_000, waitMs: 60_000 })
          .catch((error: unknown) => error),
      ]);
      await sleep(1_500);
      const [primary] = await deployment.primaries();
      const { from } = await deployment.faults.failover({
        how: 'kill',
        ...(primary ? { node: primary } : {}),
      });
      const promoted = await deployment.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: 60_000,
      });
      expect(promoted.seen, promoted.detail).toBe(true);
      await Promise.all([holder.close(), waiter.close(), sharedHolder.close(), sharedWaiter.close()]);
      await sleep(CLOSED_GRACE_MS);
      expect(resources.open()).toEqual([]);
      await Promise.all(waits);
    } finally {
      resources.stop();
      await Promise.all([holder.close(), waiter.close(), sharedHolder.close(), sharedWaiter.close()]);
      await deployment.faults.heal();
    }
  }, 240_000);
});
