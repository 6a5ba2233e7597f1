import { randomUUID } from 'node:crypto';
import type { Cluster } from '@fencekit/cluster';
import { MemoryFencedResource, StaleFenceError } from '@fencekit/core';
import { type AttemptRequest, LockNode, resourceKeys } from '@fencekit/redis/internal';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownDeployment } from './support/deployments.js';

/**
 * Issue #17 review, F1: a grant the old primary handed to a waiter (replicated) and which the waiter then
 * re-arms on the promoted replica (its heartbeat or a re-sent attempt finds it holds the lock already) must
 * come back with a fence of the promoted replica's epoch. It came back with the old primary's recorded epoch,
 * so the old primary, cut off but still serving its own clients, later granted a higher fence of that old
 * epoch, and a fenced resource accepted the stale holder's write after the new primary's holder wrote.
 * Script level (LockNode on direct connections), so each step is deterministic.
 */
const TTL_MS = 15_000;
const EPOCH = 10n ** 12n;

function wait(owner: string, ticket: string): AttemptRequest {
  return {
    owner,
    ttlMs: TTL_MS,
    mode: 'wait',
    ticket,
    waiterTtlMs: 60_000,
    channel: 'fencekit:wake:rearm-test',
    fenced: true,
    handoff: true,
  };
}

function connect(endpoint: string): Redis {
  const [host, port] = endpoint.split(':');
  const redis = new Redis({ host, port: Number(port), maxRetriesPerRequest: 1, commandTimeout: 5_000 });
  redis.on('error', () => undefined);
  return redis;
}

function endpointOf(cluster: Cluster, id: string): string {
  const node = cluster.nodes.find((n) => n.id === id);
  if (node === undefined) throw new Error(`no node ${id}`);
  return node.endpoint;
}

for (const topology of ['redis-sentinel', 'redis-cluster'] as const) {
  describe(`${topology}: a hand-off re-armed on the promoted replica`, () => {
    const deploymentOf = ownDeployment(topology);

    it('takes a fence of the new epoch, above every grant of the old primary, also its later ones', async () => {
      const deployment = deploymentOf();
      const primary =
        topology === 'redis-sentinel' ? await deployment.leader() : (await deployment.primaries())[0];
      if (primary === undefined) throw new Error('no primary');
      const connections: Redis[] = [];
      const open = (endpoint: string): Redis => {
        const redis = connect(endpoint);
        connections.push(redis);
        return redis;
      };
      try {
        const old = open(endpointOf(deployment, primary));
        const resource = await servedBy(old, 'rearm');
        const keys = resourceKeys('fencekit:', resource);
        const P = new LockNode('old primary', old, undefined, true);

        // H holds, W queues; H's release hands the lock to W (a grant of the old primary), which every
        // replica receives before the split.
        const holder = await P.attempt(keys, wait('H', 'auto'));
        expect(holder.granted).toBe(true);
        const queued = await P.attempt(keys, wait('W', 'auto'));
        if (queued.granted) throw new Error('W was granted while H holds');
        expect(await P.release(keys, 'H')).toBe(1);
        expect(await old.get(keys.lock)).toBe('W');
        const handedFence =
          BigInt((await old.get(keys.fence)) ?? '0') + BigInt(await epochOf(old, keys.epoch)) * EPOCH;
        await old.set(`fencekit-test:{${resource}}`, '1', 'PX', 10_000);
        const replicas = topology === 'redis-sentinel' ? 2 : 1;
        expect(Number(await old.wait(replicas, 10_000))).toBeGreaterThanOrEqual(replicas);

        const { from } = await deployment.faults.splitBrain({ node: primary });
        const promoted = await deployment.faults.observe({
          fault: 'splitBrain',
          node: from,
          phase: 'started',
          timeoutMs: 60_000,
        });
        expect(promoted.seen, promoted.detail).toBe(true);
        const fresh = open(endpointOf(deployment, await newPrimaryOf(deployment, from, resource)));
        const R = new LockNode('promoted replica', fresh, undefined, true);
        expect(await fresh.get(keys.lock)).toBe('W');

        // W's heartbeat (its ticket), answered by the promoted replica: W already holds, so it is re-armed.
        const rearmed = await R.attempt(keys, wait('W', String(queued.ticket)));
        if (!rearmed.granted || rearmed.fence === null)
          throw new Error('W was not granted on the promoted replica');
        const rearmedFence = BigInt(rearmed.fence);
        expect(rearmedFence / EPOCH).toBeGreaterThan(handedFence / EPOCH);
        expect(rearmedFence).toBeGreaterThan(handedFence);
        // Re-armed again on the same primary: the same fence, no new one per heartbeat.
        const again = await R.attempt(keys, wait('W', String(queued.ticket)));
        expect(again.granted && again.fence).toBe(rearmed.fence);

        if (topology === 'redis-sentinel') {
          // The isolated old primary keeps serving its clients: once W's copy there runs out it grants V.
          for (let i = 0; i < 120 && (await old.pttl(keys.lock)) > 0; i++) {
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          const stale = await P.attempt(keys, wait('V', 'auto'));
          if (!stale.granted || stale.fence === null) throw new Error('V was not granted on the old primary');
          expect(BigInt(stale.fence)).toBeLessThan(rearmedFence);
          const store = new MemoryFencedResource<string>();
          await store.write('stock', 'W', rearmedFence);
          await expect(store.write('stock', 'V', BigInt(stale.fence))).rejects.toBeInstanceOf(
            StaleFenceError,
          );
          expect((await store.read('stock'))?.value).toBe('W');
        }

        await deployment.faults.heal();
        await deployment.faults
          .observe({ fault: 'splitBrain', node: from, phase: 'healed', timeoutMs: 60_000 })
          .catch(() => undefined);
      } finally {
        for (const redis of connections) redis.disconnect();
      }
    }, 240_000);
  });
}

/** The recorded epoch ("epoch|reign") of the resource, 1 when none is recorded. */
async function epochOf(redis: Redis, key: string): Promise<string> {
  const stored = await redis.get(key);
  return stored === null ? '1' : (stored.split('|')[0] ?? '1');
}

/** A fresh resource name whose keys `redis` serves (no MOVED in a Cluster). */
async function servedBy(redis: Redis, kind: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const resource = `${kind}-${randomUUID()}`;
    const moved = await redis.exists(`fencekit:{${resource}}:lock`).then(
      () => false,
      (error: Error) => error.message.startsWith('MOVED'),
    );
    if (!moved) return resource;
  }
  throw new Error('no resource name served by the node in 200 tries');
}

/** The primary, other than `from`, that now serves `resource` (as the majority names primaries). */
async function newPrimaryOf(cluster: Cluster, from: string, resource: string): Promise<string> {
  for (const id of await cluster.primaries()) {
    if (id === from) continue;
    const redis = connect(endpointOf(cluster, id));
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
  throw new Error(`no primary other than ${from} serves ${resource}`);
}
