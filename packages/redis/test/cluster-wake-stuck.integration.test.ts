import { randomUUID } from 'node:crypto';
import { LockTimeoutError, monotonicNow } from '@fencekit/core';
import { RedisLockClient, RedisSharedLockClient } from '@fencekit/redis';
import { type Cluster as IoCluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { clusterConnection, ownDeployment } from './support/deployments.js';
import { watchOpenResources } from './support/open-resources.js';

/**
 * Issue #17, the gap cluster-wake-outage left open: a subscriber `Cluster` whose only startup node is a primary
 * killed by a failover (and never restarted) never becomes ready. Waiters still get their grants by polling,
 * but before the fix each wait left its SSUBSCRIBE and SUNSUBSCRIBE in that Cluster's offline queue (two more
 * per wait, kept until the client closed: 16 after 8 waits) and the subscriber was never rebuilt, so no waiter
 * of that client was ever woken again. Now a subscriber whose SSUBSCRIBE stays unanswered for three heartbeats
 * is replaced by one seeded from the command connection's slot map, which the waiters' channels move to.
 */
const CLIENT_CODE = /packages\/(redis|core)\/src\/|node_modules\/ioredis\//;
/** heartbeat = waiterTtlMs / 3 = 3 s: far above a wake-up's milliseconds, so a prompt hand-off is a wake-up. */
const WAITER_TTL_MS = 9_000;
const HEARTBEAT_MS = WAITER_TTL_MS / 3;
/** Waits of 1.5 s each: 12 s in all, past the three heartbeats (9 s) after which a stuck subscriber is rebuilt. */
const WAITS = 8;
const WAIT_MS = 1_500;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What one client kind (mutex or semaphore) needs from the test: a wait, and the holder's release. */
interface Contender {
  readonly name: string;
  readonly commands: IoCluster;
  /** An acquire of the held resource; resolves to its release. */
  acquire(waitMs: number): Promise<() => Promise<void>>;
  /** Gives back the holder's grant. */
  releaseHolder(): Promise<void>;
}

interface Measured {
  readonly name: string;
  /** The most commands seen queued, over all the client's subscriber Clusters, after any wait. */
  readonly maxQueued: number;
  /** Queued after each wait. */
  readonly queued: number[];
  readonly subscribers: number;
  /** Whether the client's newest subscriber became ready (bounded wait). */
  readonly recovered: boolean;
  /** From the holder's release to the waiter's grant, once recovered; undefined when not measured. */
  readonly handOffMs: number | undefined;
}

describe('redis-cluster: a subscriber that never comes up', () => {
  const deploymentOf = ownDeployment('redis-cluster');

  it('is rebuilt: nothing piles up in its offline queue and waiters are woken again (mutex, semaphore)', async () => {
    const deployment = deploymentOf();
    const [seedId, otherId] = await deployment.primaries();
    const seed = deployment.nodes.find((n) => n.id === seedId);
    const other = deployment.nodes.find((n) => n.id === otherId);
    if (seed === undefined || other === undefined) throw new Error('fewer than two primaries');
    const resource = await servedBy(other.endpoint);
    const everywhere = clusterConnection(deployment);
    const seedOnly = { cluster: [hostPort(seed.endpoint)], options: everywhere.options };
    const resources = watchOpenResources(CLIENT_CODE);
    const holder = new RedisLockClient({ connection: everywhere });
    const waiter = new RedisLockClient({ connection: seedOnly, waiterTtlMs: WAITER_TTL_MS });
    const sharedHolder = new RedisSharedLockClient({ connection: everywhere });
    const sharedWaiter = new RedisSharedLockClient({ connection: seedOnly, waiterTtlMs: WAITER_TTL_MS });
    const permits = { permits: 1 };
    let left: string[] = [];
    try {
      const lease = await holder.acquire(resource, { ttlMs: 60_000 });
      const permit = await sharedHolder.semaphore(resource, permits).acquire({ ttlMs: 60_000 });
      // The waiters' command connections know every node before the failover.
      expect(await waiter.tryAcquire(resource, { ttlMs: 1_000 })).toBeNull();
      expect(await sharedWaiter.semaphore(resource, permits).tryAcquire({ ttlMs: 1_000 })).toBeNull();
      const mutex: Contender = {
        name: 'mutex',
        commands: waiter.redis as IoCluster,
        acquire: async (waitMs) => {
          const got = await waiter.acquire(resource, { ttlMs: 5_000, waitMs });
          return () => got.release();
        },
        releaseHolder: () => lease.release(),
      };
      const semaphore: Contender = {
        name: 'semaphore',
        commands: sharedWaiter.redis as IoCluster,
        acquire: async (waitMs) => {
          const got = await sharedWaiter.semaphore(resource, permits).acquire({ ttlMs: 5_000, waitMs });
          return () => got.release();
        },
        releaseHolder: () => permit.release(),
      };
      // Pass-through: records the subscriber Clusters the clients make from their command connection.
      const made = new Map([mutex, semaphore].map((c) => [c, recordDuplicates(c.commands)]));

      const { from } = await deployment.faults.failover({ how: 'kill', node: seed.id });
      const promoted = await deployment.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: 60_000,
      });
      expect(promoted.seen, promoted.detail).toBe(true);

      const results = await Promise.all([mutex, semaphore].map((c) => measure(c, made.get(c) ?? [])));
      console.log(JSON.stringify(results));
      for (const result of results) {
        expect(result.subscribers, `${result.name}: no subscriber made`).toBeGreaterThan(0);
        // One SSUBSCRIBE (and its SUNSUBSCRIBE) at most for the one channel waited on.
        expect(
          result.maxQueued,
          `${result.name}: queued after each wait ${result.queued}`,
        ).toBeLessThanOrEqual(2);
        expect(result.recovered, `${result.name}: subscriber never ready`).toBe(true);
        expect(result.handOffMs, `${result.name}: hand-off after recovery`).toBeLessThan(HEARTBEAT_MS);
      }
    } finally {
      await Promise.all([holder.close(), waiter.close(), sharedHolder.close(), sharedWaiter.close()]);
      await sleep(100);
      left = resources.open();
      resources.stop();
      await deployment.faults.heal();
    }
    expect(left, 'left open after close()').toEqual([]);
  }, 240_000);
});

/** Waits WAITS times on the held resource, then, if its subscriber recovered, times a hand-off. */
async function measure(contender: Contender, made: IoCluster[]): Promise<Measured> {
  const queued: number[] = [];
  for (let i = 0; i < WAITS; i++) {
    const error = await contender.acquire(WAIT_MS).then(
      async (release) => {
        await release();
        return new Error('granted while held');
      },
      (caught: unknown) => caught,
    );
    expect(error, contender.name).toBeInstanceOf(LockTimeoutError);
    queued.push(made.reduce((sum, subscriber) => sum + offlineQueued(subscriber), 0));
  }
  const base = { name: contender.name, maxQueued: Math.max(0, ...queued), queued, subscribers: made.length };
  const recovered = await until(() => made.at(-1)?.status === 'ready', 20_000);
  if (!recovered) return { ...base, recovered, handOffMs: undefined };
  // Queued and subscribed (an SSUBSCRIBE to a ready subscriber is answered in milliseconds) before the release.
  const waiting = contender.acquire(20_000);
  await sleep(1_000);
  const releasedAt = monotonicNow();
  await contender.releaseHolder();
  const release = await waiting;
  const handOffMs = monotonicNow() - releasedAt;
  await release();
  return { ...base, recovered, handOffMs };
}

/** Length of an ioredis Cluster's offline queue (not in its declared types; a Deque in every 5.x). */
function offlineQueued(cluster: IoCluster): number {
  return (cluster as unknown as { offlineQueue?: { length?: number } }).offlineQueue?.length ?? 0;
}

function recordDuplicates(cluster: IoCluster): IoCluster[] {
  const made: IoCluster[] = [];
  const duplicate = cluster.duplicate.bind(cluster);
  cluster.duplicate = ((...args: Parameters<IoCluster['duplicate']>) => {
    const copy = duplicate(...args);
    made.push(copy);
    return copy;
  }) as IoCluster['duplicate'];
  return made;
}

async function until(check: () => boolean, withinMs: number): Promise<boolean> {
  const deadline = monotonicNow() + withinMs;
  while (!check()) {
    if (monotonicNow() > deadline) return false;
    await sleep(50);
  }
  return true;
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
      const resource = `wake-stuck-${randomUUID()}`;
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
