import { randomUUID } from 'node:crypto';
import { type Cluster, type ClusterNode, startCluster } from '@fencekit/cluster';
import { LockAbortedError, type ManagedLease, monotonicNow } from '@fencekit/core';
import { RedlockClient, type RedlockClientOptions } from '@fencekit/redlock';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuedWaiters, untilQueued } from '../../redis/test/support/queue.js';
import { untilLockOnEvery } from './support/lock-state.js';

// Its own five nodes behind fault proxies: this file cuts clients off and skews clocks.
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ topology: 'redis-independent', nodes: 5, proxy: true });
});
afterAll(async () => {
  await cluster?.close();
});

/**
 * A client that reaches `reachable` directly and every other node through its proxy, so cutting the
 * proxies (`faults.cutClients`) leaves it with exactly the nodes in `reachable`.
 */
function clientReaching(reachable: readonly ClusterNode[], options: Partial<RedlockClientOptions> = {}) {
  const nodes = cluster.nodes.map((n) =>
    reachable.includes(n) ? `redis://${n.directEndpoint}` : `redis://${n.endpoint}`,
  );
  return new RedlockClient({ nodes, nodeTimeoutMs: 100, ...options });
}

function direct(nodes: readonly ClusterNode[]): string[] {
  return nodes.map((n) => n.directEndpoint);
}

describe('RedlockClient under a partition', () => {
  it('returns from release at a quorum, and its own next acquire never races the slow nodes', async () => {
    const [, , , , n5] = cluster.nodes as ClusterNode[];
    if (!n5) throw new Error('expected 5 nodes');
    // Every node through its proxy (none cut here), so n5 can be slowed down.
    const client = clientReaching([], { nodeTimeoutMs: 3_000 });
    const r = `slow-release-${randomUUID()}`;
    try {
      await (await client.acquire(`warm-${randomUUID()}`, { ttlMs: 2_000 })).release();
      // n5 answers 1 s late: acquire and release both return on the four fast nodes. (Slow enough that
      // "returned before n5 answered" stays true on a machine loaded 40 deep: CI saw 60 ms fail there.)
      await cluster.faults.latency(n5.id, { ms: 500 });
      const direct = new Redis(`redis://${n5.directEndpoint}`);
      try {
        for (let i = 0; i < 4; i++) {
          const lease = await client.acquire(r, { ttlMs: 5_000, waitMs: 0 });
          // The previous release was still on its way to n5 when this acquire returned; n5 must
          // still have applied it first (one connection, in order) and granted this acquire too.
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          expect(await direct.get(`fencekit:{${r}}:lock`)).toBe(lease.owner);
          const startedAt = monotonicNow();
          await lease.release();
          // Returned on the four fast nodes, before n5's 1 s round trip.
          expect(monotonicNow() - startedAt).toBeLessThan(800);
        }
        await client.close();
        // close() waited for the last release on n5.
        expect(await direct.exists(`fencekit:{${r}}:lock`)).toBe(0);
      } finally {
        direct.disconnect();
      }
    } finally {
      await cluster.faults.heal();
      await client.close();
    }
  });

  it('a waiter stopped while a round is in flight leaves no queue entry behind', async () => {
    const [n1, , , n4, n5] = cluster.nodes as ClusterNode[];
    if (!n1 || !n4 || !n5) throw new Error('expected 5 nodes');
    const r = `stopped-in-flight-${randomUUID()}`;
    const holder = clientReaching(cluster.nodes);
    // Every node through its proxy, so n5 can be slowed down; its timeout covers n5's slowness.
    const waiter = clientReaching([], { nodeTimeoutMs: 600 });
    const onN1 = new Redis(`redis://${n1.directEndpoint}`);
    const onN5 = new Redis(`redis://${n5.directEndpoint}`);
    const lockKey = `fencekit:{${r}}:lock`;
    const queueKey = `fencekit:{${r}}:queue`;
    let lease: ManagedLease<undefined> | undefined;
    try {
      await (await waiter.acquire(`warm-${randomUUID()}`, { ttlMs: 1_000 })).release();
      lease = await holder.acquire(r, { ttlMs: 30_000 });
      // The holder keeps n1–n3; n4 and n5 are free, so each of the waiter's rounds takes them and
      // gives them back with a requeue (2 of the 3 needed). Deleted once every copy is set.
      await untilLockOnEvery(direct(cluster.nodes), r, lease.owner);
      const onN4 = new Redis(`redis://${n4.directEndpoint}`);
      await onN4.del(lockKey).finally(() => onN4.disconnect());
      await onN5.del(lockKey);
      const controller = new AbortController();
      const waiting = waiter
        .acquire(r, { ttlMs: 5_000, waitMs: 20_000, signal: controller.signal })
        .catch((error: unknown) => error);
      await untilQueued(n1.directEndpoint, r, 1);
      await untilQueued(n5.directEndpoint, r, 1);
      // n5 now answers 300 ms late. Wake the waiter (as a release on n1 would): its next round is in
      // flight on n5 when it is stopped; the round's give-back with requeue reaches n5 only after
      // that round's answer, so after the stop.
      await cluster.faults.latency(n5.id, { ms: 150 });
      const queued = await queuedWaiters(onN1, r);
      expect(queued).toHaveLength(1);
      const { owner, channel } = queued[0] as { owner: string; channel: string };
      await onN1.publish(channel, owner);
      await new Promise((resolve) => setTimeout(resolve, 50));
      controller.abort();
      expect(await waiting).toBeInstanceOf(LockAbortedError);
      // Anything still on its way to n5 lands within two of its round trips.
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(await onN5.zscore(queueKey, owner)).toBeNull();
      expect(await onN5.get(lockKey)).toBeNull();
    } finally {
      await cluster.faults.heal();
      await lease?.release().catch(() => undefined);
      onN1.disconnect();
      onN5.disconnect();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  // W1 and W2 retry at the pace of the same node timeout: before a head whose turn had lapsed went
  // to the back of the line when giving back, W1 could retake n3 just before each of W2's rounds, in
  // step, for good (head-grace.integration.test.ts replays that on one node).
  it('grants the waiter that reaches a free quorum, even behind a live head that cannot win', async () => {
    const [n1, n2, n3, n4, n5] = cluster.nodes as [
      ClusterNode,
      ClusterNode,
      ClusterNode,
      ClusterNode,
      ClusterNode,
    ];
    const r = `partition-${randomUUID()}`;
    const holder = clientReaching(cluster.nodes);
    const w1 = clientReaching([n1, n2, n3]);
    const w2 = clientReaching([n3, n4, n5]);
    const leases: ManagedLease<undefined>[] = [];
    let w1Waiting: Promise<unknown> | undefined;
    try {
      // Every connection is up before the cut, so the cut behaves as a network partition (requests
      // hang) rather than as refused connections.
      for (const c of [holder, w1, w2])
        await (await c.acquire(`warm-${randomUUID()}`, { ttlMs: 1_000 })).release();

      const held = await holder.acquire(r, { ttlMs: 30_000 });
      leases.push(held);
      // The holder's copies on n3–n5 expire early (their clocks jump past the TTL): it keeps n1, n2.
      // Only once every copy is set: a copy set after the jump would live its whole 30 s there.
      await untilLockOnEvery(direct(cluster.nodes), r, held.owner);
      for (const n of [n3, n4, n5]) await cluster.faults.clock(n.id, { offsetMs: 60_000 });
      await untilLockOnEvery(direct([n3, n4, n5]), r, null);
      for (const n of cluster.nodes) await cluster.faults.cutClients(n.id);

      // W1 reaches n1–n3: n1, n2 are held, so it can never win, but it stays alive and queues first;
      // on n3 (free) it is the head of the queue.
      const controller = new AbortController();
      w1Waiting = w1
        .acquire(r, { ttlMs: 5_000, waitMs: 30_000, signal: controller.signal })
        .then((lease) => leases.push(lease))
        .catch((error: unknown) => error);
      await untilQueued(n3.directEndpoint, r, 1);

      // W2 reaches n3–n5, all free: a quorum it must be granted, although W1 is ahead of it on n3.
      const startedAt = monotonicNow();
      const lease = await w2.acquire(r, { ttlMs: 5_000, waitMs: 10_000 });
      const waitedMs = monotonicNow() - startedAt;
      leases.push(lease);
      expect(lease.held).toBe(true);
      // Bounded: a few rounds and the head's grace, nowhere near the 10 s wait.
      expect(waitedMs).toBeLessThan(3_000);

      controller.abort();
      expect(await w1Waiting).toBeInstanceOf(Error);
    } finally {
      await cluster.faults.heal();
      await Promise.all(leases.map((l) => l.release().catch(() => undefined)));
      await Promise.all([holder, w1, w2].map((c) => c.close()));
    }
  });
});
