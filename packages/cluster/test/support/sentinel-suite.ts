import { type Cluster, InvalidArgumentError, type ProviderName } from '@fencekit/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeAndCheck,
  eventuallyReads,
  sentinelClient,
  sentinelLogs,
  startReplicated,
  withNode,
} from './replicated.js';

/**
 * redis-sentinel on real servers (processes or containers): a primary, two replicas, a Sentinel beside each. One cluster for the file
 * (a start takes ~10 s: the Sentinels find each other through hello messages every 2 s); the graceful failover
 * runs before the kill, so the Sentinels' 8 s wait between failovers of one primary has passed by then.
 */
export function sentinelSuite(provider: ProviderName): void {
  describe(`redis-sentinel (${provider})`, () => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await startReplicated('redis-sentinel', provider);
    });
    afterAll(() => cluster?.close());

    it('serves: a write through the Sentinels lands on the primary and is read back on both replicas', async () => {
      expect(cluster.nodes.map((n) => n.id)).toEqual(['n1', 'n2', 'n3']);
      expect(cluster.sentinel?.masterName).toBe('fencekit');
      expect(cluster.sentinel?.endpoints).toHaveLength(3);
      expect(await cluster.leader()).toBe('n1');
      expect(await cluster.primaries()).toEqual(['n1']);
      const client = sentinelClient(cluster);
      try {
        await client.set('serves', 'yes');
        expect(await client.call('ROLE').then((r) => (r as string[])[0])).toBe('master');
      } finally {
        client.disconnect();
      }
      await eventuallyReads(cluster.nodes[1]!, 'serves', 'yes');
      await eventuallyReads(cluster.nodes[2]!, 'serves', 'yes');
      // Replicas refuse writes: the role is real, not only what the Sentinels say.
      await withNode(cluster.nodes[1]!, async (redis) => {
        await expect(redis.set('x', '1')).rejects.toThrow(/READONLY/);
      });
    });

    it('graceful failover: SENTINEL FAILOVER promotes a replica; the old primary replicates it', async () => {
      const { from } = await cluster.faults.failover();
      expect(from).toBe('n1');
      const started = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'started' });
      expect(started.seen, `${started.detail}\n${sentinelLogs(cluster)}`).toBe(true);
      const promoted = await cluster.waitForLeader({ not: from, timeoutMs: 20_000 });
      await cluster.faults.heal();
      const healed = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.primaries()).toEqual([promoted]);
      // Data written before the failover survived it (it was replicated before the promotion).
      await eventuallyReads(cluster.nodes.find((n) => n.id === promoted)!, 'serves', 'yes');
    });

    it('failover by kill: the primary SIGKILLed, a replica promoted; heal restarts it as a replica', async () => {
      const before = await cluster.leader();
      const { from } = await cluster.faults.failover({ how: 'kill' });
      expect(from).toBe(before);
      const killed = await cluster.faults.observe({ fault: 'kill', node: from, phase: 'started' });
      expect(killed.seen, killed.detail).toBe(true);
      const started = await cluster.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: 30_000,
      });
      expect(started.seen, `${started.detail}\n${sentinelLogs(cluster)}`).toBe(true);
      await cluster.faults.heal();
      await cluster.faults.heal(); // idempotent
      const healed = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.leader()).not.toBe(from);
    });

    it('a failover of a node that is not the primary is a bad argument', async () => {
      const primary = await cluster.leader();
      const replica = cluster.nodes.find((n) => n.id !== primary)!.id;
      await expect(cluster.faults.failover({ node: replica })).rejects.toThrow(InvalidArgumentError);
      await expect(cluster.faults.failover({ how: 'nicely' as 'kill' })).rejects.toThrow(/failover\.how/);
    });

    it('close() leaves no process (servers, Sentinels), dir or listening socket', () =>
      closeAndCheck(cluster));
  });
}

/** Partitions on redis-sentinel cut replication and Sentinel links (they pass the peer proxies), never clients. */
export function sentinelSplitSuite(provider: ProviderName): void {
  describe(`redis-sentinel (${provider}): partitions and split brain`, () => {
    let cluster: Cluster;
    const node = (id: string) => cluster.nodes.find((n) => n.id === id)!;
    beforeAll(async () => {
      cluster = await startReplicated('redis-sentinel', provider);
    });
    afterAll(() => cluster?.close());

    it('an isolated replica loses its replication link (seen by the probe) and gets it back on heal', async () => {
      await cluster.faults.partition({ isolate: 'n3' });
      const cut = await cluster.faults.observe({ fault: 'partition', phase: 'started', timeoutMs: 15_000 });
      expect(cut.seen, cut.detail).toBe(true);
      // The primary drops the replica, or the replica its link, whichever's repl-timeout runs out first.
      expect(cut.detail).toMatch(/n1: primary, 1 replicas connected|n3: replica, link down/);
      // A write on the primary does not reach the cut replica (its client port still answers: clients are not cut).
      await withNode(node('n1'), (redis) => redis.set('while-n3-cut', '1'));
      await eventuallyReads(node('n2'), 'while-n3-cut', '1');
      await withNode(node('n3'), async (redis) => expect(await redis.get('while-n3-cut')).toBeNull());
      await cluster.faults.heal();
      const healed = await cluster.faults.observe({ fault: 'partition', phase: 'healed', timeoutMs: 15_000 });
      expect(healed.seen, healed.detail).toBe(true);
      await eventuallyReads(node('n3'), 'while-n3-cut', '1');
      expect(await cluster.leader()).toBe('n1'); // a replica cut off is no reason to fail over
    });

    it('split brain: the isolated primary keeps taking writes while a replica is promoted; heal demotes it and its writes are lost', async () => {
      const client = sentinelClient(cluster);
      try {
        await client.set('before-split', 'kept');
      } finally {
        client.disconnect();
      }
      await eventuallyReads(node('n2'), 'before-split', 'kept');
      const { from } = await cluster.faults.splitBrain();
      expect(from).toBe('n1');
      // The old primary's clients still reach it, and it still accepts writes.
      await withNode(node(from), (redis) => redis.set('old-side', 'lost'));
      const started = await cluster.faults.observe({
        fault: 'splitBrain',
        node: from,
        phase: 'started',
        timeoutMs: 30_000,
      });
      expect(started.seen, `${started.detail}\n${sentinelLogs(cluster)}`).toBe(true);
      expect(started.detail).toMatch(/two primaries: n1/);
      await withNode(node(from), async (redis) => {
        await redis.set('old-side-later', 'lost');
        expect(await redis.get('old-side')).toBe('lost');
      });
      const promoted = await cluster.waitForLeader({ not: from, timeoutMs: 10_000 });
      await withNode(node(promoted), async (redis) => {
        await redis.set('new-side', 'kept');
        expect(await redis.get('old-side')).toBeNull(); // the cut replication never carried it over
      });
      await cluster.faults.heal();
      const healed = await cluster.faults.observe({ fault: 'splitBrain', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      // The old primary resynced from the new one: its split-time writes are gone, the other side's are there.
      await eventuallyReads(node(from), 'new-side', 'kept');
      await withNode(node(from), async (redis) => {
        expect(await redis.get('old-side')).toBeNull();
        expect(await redis.get('old-side-later')).toBeNull();
        expect(await redis.get('before-split')).toBe('kept');
      });
      expect(await cluster.leader()).toBe(promoted);
    });

    it('close() leaves no process (servers, Sentinels), dir or listening socket', () =>
      closeAndCheck(cluster));
  });
}
