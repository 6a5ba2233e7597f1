import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { MemoryFencedResource, StaleFenceError } from '@fencekit/core';
import { type Lease, RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterConnection, providerFromEnv, sentinelConnection } from './support/deployments.js';

/**
 * What a failover does to fences, on real servers: the primary is cut off from its replicas, Sentinels and
 * peers (@fencekit/cluster's `splitBrain`) while a client keeps using it, and a replica is promoted on the
 * other side. Replication is asynchronous, so the promoted replica never saw the grants made on the isolated
 * primary meanwhile: the lock is granted twice, and the plain fence counter hands out again fences the old
 * primary already gave. With `fence: 'epoch'` every grant of the promoted replica is above all of them, so a
 * fenced resource refuses the stale holder once the new one wrote. Both are asserted: the first documents the
 * gap, the second that the opt-in closes it for fenced writes (not for the lock).
 */
const TTL_MS = 60_000;
/** An epoch fence is epoch × EPOCH + counter. */
const EPOCH = 10n ** 12n;

for (const topology of ['redis-sentinel', 'redis-cluster'] as const) {
  describe(`${topology}: a split brain`, () => {
    let cluster: Cluster | undefined;
    beforeAll(async () => {
      cluster = await startCluster({ topology, provider: providerFromEnv(), startTimeoutMs: 90_000 });
    }, 120_000);
    afterAll(async () => {
      await cluster?.close();
    }, 60_000);

    it('a client follows the primary through a graceful failover; its epoch fences move to a higher epoch', async () => {
      const deployment = cluster as Cluster;
      const connection =
        topology === 'redis-sentinel' ? sentinelConnection(deployment) : clusterConnection(deployment);
      const counter = new RedisLockClient({ connection });
      const epoch = new RedisLockClient({ connection, fence: 'epoch' });
      try {
        const resource = `follow-${randomUUID()}`;
        const before = {
          counter: await grantAndRelease(counter, resource),
          epoch: await grantAndRelease(epoch, resource),
        };
        const primary =
          topology === 'redis-sentinel' ? await deployment.leader() : await primaryOf(deployment, resource);
        const { from } = await deployment.faults.failover({
          how: 'graceful',
          ...(primary ? { node: primary } : {}),
        });
        const promoted = await deployment.faults.observe({
          fault: 'failover',
          node: from,
          phase: 'started',
          timeoutMs: 60_000,
        });
        expect(promoted.seen, promoted.detail).toBe(true);
        // Until the old primary is demoted it still takes the grants of clients connected to it, and loses them
        // when it turns replica: waited out here, so that the grants below are the promoted replica's.
        await deployment.faults.heal();
        const demoted = await deployment.faults.observe({
          fault: 'failover',
          node: from,
          phase: 'healed',
          timeoutMs: 60_000,
        });
        expect(demoted.seen, demoted.detail).toBe(true);
        // The same clients, without being told: the next grants come from the promoted replica.
        const after = { counter: 0n, epoch: 0n };
        for (const [client, kind] of [
          [counter, 'counter'],
          [epoch, 'epoch'],
        ] as const) {
          const lease = await acquireWithin(client, resource, 30_000);
          after[kind] = lease.fence;
          await lease.release();
        }
        // A graceful failover loses nothing here: the counter goes on.
        expect(after.counter).toBeGreaterThan(before.epoch % EPOCH);
        expect(after.epoch / EPOCH).toBeGreaterThan(before.epoch / EPOCH);
        expect(after.epoch).toBeGreaterThan(before.epoch);
      } finally {
        await Promise.all([counter.close(), epoch.close()]);
      }
    }, 240_000);

    it('rolls the counter fence back; epoch fences stay above every fence of the old primary', async () => {
      const deployment = cluster as Cluster;
      const primary =
        topology === 'redis-sentinel' ? await deployment.leader() : (await deployment.primaries())[0];
      const node = deployment.nodes.find((n) => n.id === primary);
      if (node === undefined) throw new Error(`no primary found (${primary})`);
      // Resources whose slot the primary serves (in Redis Cluster, every key of one has the same slot).
      const [counterResource, epochResource] = [
        await servedBy(node.endpoint, 'counter'),
        await servedBy(node.endpoint, 'epoch'),
      ];
      // The old side: clients of the primary itself, as an application cut off with it would be.
      const direct = `redis://${node.endpoint}`;
      const oldCounter = new RedisLockClient({ connection: direct });
      const oldEpoch = new RedisLockClient({ connection: direct, fence: 'epoch' });
      const clients = [oldCounter, oldEpoch];
      try {
        // Grants every replica has (WAIT), then the split.
        for (const [client, resource] of [
          [oldCounter, counterResource],
          [oldEpoch, epochResource],
        ] as const) {
          await (await client.acquire(resource, { ttlMs: TTL_MS })).release();
        }
        await waitForReplicas(node.endpoint, topology === 'redis-sentinel' ? 2 : 1, counterResource);
        const { from } = await deployment.faults.splitBrain({ node: node.id });
        expect(from).toBe(node.id);
        // At once: a Redis Cluster primary cut off stops taking writes once its node timeout tells it so.
        const oldFences = { counter: [] as bigint[], epoch: [] as bigint[] };
        for (let i = 0; i < 3; i++) {
          oldFences.counter.push(await grantAndRelease(oldCounter, counterResource));
          oldFences.epoch.push(await grantAndRelease(oldEpoch, epochResource));
        }
        // Held on the isolated primary, for the whole test: the stale holder.
        const staleCounter = await oldCounter.acquire(counterResource, { ttlMs: TTL_MS });
        const staleEpoch = await oldEpoch.acquire(epochResource, { ttlMs: TTL_MS });
        const promoted = await deployment.faults.observe({
          fault: 'splitBrain',
          node: from,
          phase: 'started',
          timeoutMs: 60_000,
        });
        expect(promoted.seen, promoted.detail).toBe(true);

        // The new side: clients that find the promoted replica, through the Sentinels that promoted it (the one
        // cut off with the old primary still names it, and ioredis follows the first Sentinel that answers),
        // or the cluster's majority (the isolated node is left out of the seeds: it still says it owns its slots).
        const newSide =
          topology === 'redis-sentinel'
            ? { ...sentinelConnection(deployment), sentinels: await sentinelsPast(deployment, node.endpoint) }
            : clusterConnection({
                endpoints: deployment.nodes.filter((n) => n.id !== from).map((n) => n.endpoint),
                natMap: deployment.natMap,
              });
        const newCounter = new RedisLockClient({ connection: newSide });
        const newEpoch = new RedisLockClient({ connection: newSide, fence: 'epoch' });
        clients.push(newCounter, newEpoch);
        const freshCounter = await acquireWithin(newCounter, counterResource, 30_000);
        const freshEpoch = await acquireWithin(newEpoch, epochResource, 30_000);

        // The lock is held twice either way: the promoted replica never saw the stale holder's grant.
        expect(staleCounter.held && freshCounter.held).toBe(true);
        expect(staleEpoch.held && freshEpoch.held).toBe(true);
        // The counter rolled back: a fence the old primary already handed out is handed out again.
        expect(freshCounter.fence).toBeLessThanOrEqual(staleCounter.fence);
        expect(oldFences.counter).toContain(freshCounter.fence);
        // Epoch fences: above every fence the old primary gave, before and during the split.
        for (const fence of [...oldFences.epoch, staleEpoch.fence])
          expect(freshEpoch.fence).toBeGreaterThan(fence);

        // A resource that remembers the highest fence: the new holder writes, then the stale one.
        const counterStore = new MemoryFencedResource<string>();
        await counterStore.write('stock', 'fresh', freshCounter.fence);
        // The stale holder's fence is as high or higher, so its write is accepted over the fresh one's.
        const staleWrite = await counterStore.write('stock', 'stale', staleCounter.fence).then(
          () => 'accepted',
          (error: unknown) => error,
        );
        const epochStore = new MemoryFencedResource<string>();
        await epochStore.write('stock', 'fresh', freshEpoch.fence);
        const refused = await epochStore
          .write('stock', 'stale', staleEpoch.fence)
          .catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(StaleFenceError);
        expect((await epochStore.read('stock'))?.value).toBe('fresh');
        // Only a stale fence exactly equal to the fresh one is refused in counter mode (sameFence 'refuse').
        if (freshCounter.fence < staleCounter.fence) expect(staleWrite).toBe('accepted');

        await deployment.faults.heal();
        const healed = await deployment.faults.observe({
          fault: 'splitBrain',
          node: from,
          phase: 'healed',
          timeoutMs: 60_000,
        });
        expect(healed.seen, healed.detail).toBe(true);
      } finally {
        await Promise.all(clients.map((client) => client.close()));
      }
    }, 240_000);
  });
}

async function grantAndRelease(client: RedisLockClient, resource: string): Promise<bigint> {
  const lease = await client.acquire(resource, { ttlMs: TTL_MS, waitMs: 10_000 });
  await lease.release();
  return lease.fence;
}

/** Acquires through a deployment that is still settling after a promotion; bounded by `withinMs`. */
async function acquireWithin(client: RedisLockClient, resource: string, withinMs: number): Promise<Lease> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    try {
      return await client.acquire(resource, { ttlMs: TTL_MS, waitMs: 5_000 });
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The primary (node id) that serves `resource`'s slot in a redis-cluster, as its nodes answer. */
async function primaryOf(cluster: Cluster, resource: string): Promise<string | undefined> {
  for (const id of await cluster.primaries()) {
    const node = cluster.nodes.find((n) => n.id === id);
    if (node === undefined) continue;
    const [host, port] = node.endpoint.split(':');
    const redis = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    try {
      const served = await redis.exists(`fencekit:{${resource}}:lock`).then(
        () => true,
        () => false,
      );
      if (served) return id;
    } finally {
      redis.disconnect();
    }
  }
  return undefined;
}

/** A fresh resource name whose keys the node at `endpoint` serves (no MOVED), for `kind`. */
async function servedBy(endpoint: string, kind: string): Promise<string> {
  const [host, port] = endpoint.split(':');
  const redis = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    for (let i = 0; i < 200; i++) {
      const resource = `${kind}-${randomUUID()}`;
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

/** The Sentinels that no longer name the primary at `oldEndpoint` (mapped through the cluster's natMap). */
async function sentinelsPast(
  cluster: Cluster,
  oldEndpoint: string,
): Promise<{ host: string; port: number }[]> {
  const sentinel = cluster.sentinel;
  if (sentinel === undefined) throw new Error('not a redis-sentinel cluster');
  const past: { host: string; port: number }[] = [];
  for (const endpoint of sentinel.endpoints) {
    const [host, port] = endpoint.split(':');
    const redis = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    try {
      const named = (await redis.call(
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        sentinel.masterName,
      )) as string[];
      const mapped = cluster.natMap?.[`${named[0]}:${named[1]}`];
      const client = mapped === undefined ? `${named[0]}:${named[1]}` : `${mapped.host}:${mapped.port}`;
      if (client !== oldEndpoint) past.push({ host: host ?? '127.0.0.1', port: Number(port) });
    } catch {
      // Not answering: not one to follow.
    } finally {
      redis.disconnect();
    }
  }
  expect(past.length).toBeGreaterThan(0);
  return past;
}

/** WAIT on the primary until `count` replicas acknowledged everything written so far (bounded). */
async function waitForReplicas(endpoint: string, count: number, resource: string): Promise<void> {
  const [host, port] = endpoint.split(':');
  const redis = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    // WAIT counts this connection's writes: one write of its own, after the clients' grants.
    // In the resource's slot, so the node takes it.
    await redis.set(`fencekit-test:{${resource}}`, '1', 'PX', 10_000);
    expect(Number(await redis.wait(count, 10_000))).toBeGreaterThanOrEqual(count);
  } finally {
    redis.disconnect();
  }
}
