import { randomUUID } from 'node:crypto';
import { LockTimeoutError } from '@fencekit/core';
import { type Lease, RedisLockClient, RedisSharedLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { clusterConnection, ownDeployment } from './support/deployments.js';

/**
 * Issue #17's open bug: after a failover, Redis Cluster acquires ran 25 s, 115 s and 132 s past bounds of 12 s
 * and 19.75 s, until the client was stopped. A waiter's first wait opens its subscriber `Cluster`, whose
 * SSUBSCRIBE sits in ioredis' Cluster offline queue, with no timeout, for as long as that Cluster cannot
 * reach a node to learn the slots from; the acquire waited for it before queueing. Here the subscriber's only
 * seed is a primary killed by a failover: the command connection (opened before) follows the failover, the
 * subscriber never comes up until the node is back. An acquire must still settle within its bound, and be
 * handed the lock a release gives it meanwhile (its heartbeat finds the grant while wake-ups cannot come).
 */
const RECOVER_MS = 60_000;
/**
 * README "Options": a queued acquire settles by max(waitMs + 250 ms, 5 s). The slack covers a loaded
 * machine; before the fix the acquire did not settle at all while the seed was down.
 */
const SLACK_MS = 4_000;

function boundMs(waitMs: number): number {
  return Math.max(waitMs + 250, 5_000) + SLACK_MS;
}

describe('redis-cluster: wake-ups unavailable after a failover', () => {
  const deploymentOf = ownDeployment('redis-cluster');

  it('an acquire (mutex, semaphore) settles within its bound and is handed the lock while its subscriber cannot connect', async () => {
    const deployment = deploymentOf();
    const [seedId, otherId] = await deployment.primaries();
    const seed = deployment.nodes.find((n) => n.id === seedId);
    const other = deployment.nodes.find((n) => n.id === otherId);
    if (seed === undefined || other === undefined) throw new Error('fewer than two primaries');
    // A resource of another shard than the seed's: its primary stays up and serves the command connection.
    const resource = await servedBy(other.endpoint);
    const everywhere = clusterConnection(deployment);
    const holder = new RedisLockClient({ connection: everywhere });
    // The waiters' only startup node is the primary about to be killed.
    const seedOnly = { cluster: [hostPort(seed.endpoint)], options: everywhere.options };
    const waiter = new RedisLockClient({ connection: seedOnly });
    // The semaphores' waits go the same way (RedisSharedLockClient).
    const sharedHolder = new RedisSharedLockClient({ connection: everywhere });
    const sharedWaiter = new RedisSharedLockClient({ connection: seedOnly });
    const permits = { permits: 1 };
    let lease: Lease<bigint> | undefined;
    try {
      lease = await holder.acquire(resource, { ttlMs: 30_000 });
      const permit = await sharedHolder.semaphore(resource, permits).acquire({ ttlMs: 30_000 });
      // The waiters' command connections are up and know every node before the failover.
      expect(await waiter.tryAcquire(resource, { ttlMs: 1_000 })).toBeNull();
      expect(await sharedWaiter.semaphore(resource, permits).tryAcquire({ ttlMs: 1_000 })).toBeNull();

      const { from } = await deployment.faults.failover({ how: 'kill', node: seed.id });
      expect(from).toBe(seed.id);
      const promoted = await deployment.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: RECOVER_MS,
      });
      expect(promoted.seen, promoted.detail).toBe(true);

      // The lock is held throughout: the waiter's first wait (opening its subscriber) runs out at waitMs.
      const waitMs = 2_000;
      const timedOut = await settledWithin(
        waiter.acquire(resource, { ttlMs: 5_000, waitMs }),
        boundMs(waitMs),
      );
      expect(timedOut.settled, 'acquire still pending past its bound').toBe(true);
      expect(timedOut.error).toBeInstanceOf(LockTimeoutError);
      const sharedTimedOut = await settledWithin(
        sharedWaiter.semaphore(resource, permits).acquire({ ttlMs: 5_000, waitMs }),
        boundMs(waitMs),
      );
      expect(sharedTimedOut.settled, 'semaphore acquire still pending past its bound').toBe(true);
      expect(sharedTimedOut.error).toBeInstanceOf(LockTimeoutError);
      await permit.release();

      // Released while the waiter waits: the release hands it the lock, and without a wake-up the waiter's
      // heartbeat (waiterTtlMs / 3 = 1 s) finds the grant, well within waitMs.
      const longWaitMs = 10_000;
      const waiting = settledWithin(
        waiter.acquire(resource, { ttlMs: 5_000, waitMs: longWaitMs }),
        boundMs(longWaitMs),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const released = lease;
      lease = undefined;
      await released.release();
      const handed = await waiting;
      expect(handed.settled, 'acquire still pending past its bound').toBe(true);
      expect(handed.error).toBeUndefined();
      expect(handed.value?.fence).toBe(released.fence + 1n);
      await handed.value?.release();
    } finally {
      await lease?.release().catch(() => undefined);
      await deployment.faults.heal();
      await Promise.all([holder.close(), waiter.close(), sharedHolder.close(), sharedWaiter.close()]);
    }
  }, 240_000);
});

interface Settled<T> {
  readonly settled: boolean;
  readonly value?: T;
  readonly error?: unknown;
}

/** How `work` settled within `ms`, or `settled: false`: a pending acquire must fail the test, not hang it. */
async function settledWithin<T>(work: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ settled: false }), ms);
  });
  try {
    return await Promise.race([
      work.then(
        (value) => ({ settled: true, value }),
        (error: unknown) => ({ settled: true, error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function hostPort(endpoint: string): { host: string; port: number } {
  const at = endpoint.lastIndexOf(':');
  return { host: endpoint.slice(0, at), port: Number(endpoint.slice(at + 1)) };
}

/** A fresh resource name whose keys the node at `endpoint` serves (no MOVED). */
async function servedBy(endpoint: string): Promise<string> {
  const redis = new Redis({ ...hostPort(endpoint), lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    for (let i = 0; i < 200; i++) {
      const resource = `wake-outage-${randomUUID()}`;
      const moved = await redis.exists(`fencekit:{${resource}}:lock`).then(
        () => false,
        (error: Error) => error.message.startsWith('MOVED'),
      );
      if (!moved) return resource;
    }
    throw new Error(`no resource name served by ${endpoint} in 200 tries`);
  } finally {
    redis.disconnect();
  }
}
