import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster, type Topology } from '@fencekit/cluster';
import { describeLockConformance } from '@fencekit/core/testing';
import { BackendUnavailableError, type RedisDeployment, RedisLockClient } from '@fencekit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerFromEnv } from './deployments.js';

/** What differs between the replicated topologies the suite below runs on. */
export interface ReplicatedDeployment {
  readonly topology: Extract<Topology, 'redis-sentinel' | 'redis-cluster'>;
  /** 'redis through Sentinel', 'redis Cluster': the conformance suites' names. */
  readonly name: string;
  readonly connect: (cluster: Cluster) => RedisDeployment;
  /** How the release's wake-up reaches the waiter, for the test's name. */
  readonly wakeUp: string;
  /** The replicas each primary has (WAIT for that many succeeds; two more are refused). */
  readonly replicasPerPrimary: number;
}

/**
 * The conformance suite (counter and epoch fences), the wake-up path and WAIT on one replicated topology started
 * for the calling file alone. Returns the cluster's getter for the file's own further tests.
 */
export function describeReplicatedRedis(deployment: ReplicatedDeployment): () => Cluster {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster({
      topology: deployment.topology,
      provider: providerFromEnv(),
      startTimeoutMs: 90_000,
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);
  const started = (): Cluster => {
    if (cluster === undefined) throw new Error(`the ${deployment.topology} cluster did not start`);
    return cluster;
  };
  const connection = () => deployment.connect(started());

  for (const fence of ['counter', 'epoch'] as const) {
    describeLockConformance(fence === 'counter' ? deployment.name : `${deployment.name}, epoch fences`, {
      createClient: async () =>
        new RedisLockClient({ connection: connection(), ...(fence === 'epoch' ? { fence } : {}) }),
      capabilities: { safeFences: true, fair: true, blocking: true, expiry: true, cleanClose: true },
      ttlMs: 500,
      // A waiter's first acquire opens its subscriber (through the Sentinels, or one per primary): at a
      // load of 30 it took longer than the fair-order check's 100 ms between arrivals.
      timeScale: 3,
    });
  }

  describe(`${deployment.topology}: wake-ups and WAIT`, () => {
    it(`a waiter is woken by the release (${deployment.wakeUp}), not by its 20 s heartbeat`, async () => {
      const options = { connection: connection(), waiterTtlMs: 60_000 };
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
      const have = deployment.replicasPerPrimary;
      const enough = new RedisLockClient({
        connection: connection(),
        replicas: { count: have, timeoutMs: 5_000 },
      });
      const tooMany = new RedisLockClient({
        connection: connection(),
        replicas: { count: have + 2, timeoutMs: 200 },
      });
      try {
        const resource = `wait-${randomUUID()}`;
        const lease = await enough.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 });
        await lease.release();
        const refused = await tooMany
          .acquire(resource, { ttlMs: 10_000, waitMs: 10_000 })
          .catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(BackendUnavailableError);
        expect((refused as Error).message).toMatch(
          new RegExp(`only ${have} of ${have + 2} replicas acknowledged`),
        );
        // The grant was given back: the lock is free again.
        await (await enough.acquire(resource, { ttlMs: 10_000, waitMs: 10_000 })).release();
      } finally {
        await Promise.all([enough.close(), tooMany.close()]);
      }
    }, 120_000);
  });
  return started;
}
