import type { Cluster, ProviderName } from '@fencekit/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAndCheck, clusterClient, eventuallyReads, startReplicated, withNode } from './replicated.js';

/**
 * redis-cluster on real servers (processes or containers): n1-n3 primaries with the slots split evenly, n4-n6 their replicas. One cluster
 * for the file; each fault acts on a different shard, so no test waits on another's aftermath.
 */
export function redisClusterSuite(provider: ProviderName): void {
  describe(`redis-cluster (${provider})`, () => {
    let cluster: Cluster;
    const node = (id: string) => cluster.nodes.find((n) => n.id === id)!;
    /** A key whose slot `primary` serves now (asked of the node itself). */
    const keyOn = (primary: string, prefix: string) =>
      withNode(node(primary), async (redis) => {
        for (let i = 0; i < 1000; i++) {
          const key = `${prefix}-${i}`;
          const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', key));
          const owner = (await redis.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
          const mine = owner.find(([from, to]) => from <= slot && slot <= to);
          if (
            mine &&
            cluster.natMap?.[`${mine[2][0]}:${mine[2][1]}`]?.port ===
              Number(node(primary).endpoint.split(':')[1])
          )
            return key;
        }
        throw new Error(`no key found on ${primary}`);
      });

    beforeAll(async () => {
      cluster = await startReplicated('redis-cluster', provider);
    });
    afterAll(() => cluster?.close());

    it('serves: an ioredis Cluster (seeds + natMap) writes keys on every shard; each replica reads its shard', async () => {
      expect(cluster.nodes).toHaveLength(6);
      expect(await cluster.primaries()).toEqual(['n1', 'n2', 'n3']);
      expect(cluster.sentinel).toBeUndefined();
      const client = clusterClient(cluster);
      try {
        for (const [primary, replica] of [
          ['n1', 'n4'],
          ['n2', 'n5'],
          ['n3', 'n6'],
        ] as const) {
          const key = await keyOn(primary, 'serves');
          await client.set(key, primary);
          expect(await client.get(key)).toBe(primary);
          await withNode(node(replica), async (redis) => {
            await redis.call('READONLY');
            for (let i = 0; i < 50 && (await redis.get(key)) !== primary; i++) {
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
            expect(await redis.get(key)).toBe(primary);
          });
        }
      } finally {
        client.disconnect();
      }
    });

    it('graceful failover: CLUSTER FAILOVER on n1’s replica swaps their roles', async () => {
      const { from } = await cluster.faults.failover({ node: 'n1' });
      expect(from).toBe('n1');
      const started = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'started' });
      expect(started.seen, started.detail).toBe(true);
      await cluster.faults.heal();
      const healed = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.primaries()).toEqual(['n2', 'n3', 'n4']);
    });

    it('failover by kill: n2 SIGKILLed, n5 promoted by the other primaries; heal brings n2 back as a replica', async () => {
      const { from } = await cluster.faults.failover({ how: 'kill', node: 'n2' });
      const started = await cluster.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: 30_000,
      });
      expect(started.seen, started.detail).toBe(true);
      expect(started.detail).toMatch(/n5 promoted/);
      await cluster.faults.heal();
      await cluster.faults.heal(); // idempotent
      const healed = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.primaries()).toEqual(['n3', 'n4', 'n5']);
    });

    it('split brain: n3 cut from the others takes a write, n6 is promoted; heal demotes n3 and the write is lost', async () => {
      const before = await keyOn('n3', 'split-before');
      const during = await keyOn('n3', 'split-during');
      await withNode(node('n3'), (redis) => redis.set(before, 'kept'));
      await withNode(node('n6'), async (redis) => {
        await redis.call('READONLY');
        for (let i = 0; i < 50 && (await redis.get(before)) !== 'kept'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      });
      const { from } = await cluster.faults.splitBrain({ node: 'n3' });
      // Its clients still reach it; until cluster-node-timeout tells it it is in the minority, it takes writes.
      await withNode(node(from), (redis) => redis.set(during, 'lost'));
      const started = await cluster.faults.observe({
        fault: 'splitBrain',
        node: from,
        phase: 'started',
        timeoutMs: 30_000,
      });
      expect(started.seen, started.detail).toBe(true);
      expect(started.detail).toMatch(/two primaries: n3/);
      await cluster.faults.heal();
      const healed = await cluster.faults.observe({ fault: 'splitBrain', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.primaries()).toEqual(['n4', 'n5', 'n6']);
      await withNode(node('n6'), async (redis) => {
        expect(await redis.get(before)).toBe('kept');
        expect(await redis.get(during)).toBeNull();
      });
      await withNode(node('n3'), async (redis) => {
        await redis.call('READONLY');
        expect(await redis.get(during)).toBeNull();
      });
      await eventuallyReads(node('n6'), before, 'kept');
    });

    it('a heal right after a kill failover waits for the promotion: the data survives, the killed node rejoins a replica', async () => {
      const key = await keyOn('n6', 'kept-through-kill');
      await withNode(node('n6'), (redis) => redis.set(key, 'kept'));
      await withNode(node('n3'), async (redis) => {
        await redis.call('READONLY');
        for (let i = 0; i < 50 && (await redis.get(key)) !== 'kept'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(await redis.get(key)).toBe('kept');
      });
      const { from } = await cluster.faults.failover({ how: 'kill', node: 'n6' });
      await cluster.faults.heal(); // at once: restarted before n3 took over, the empty n6 would be primary again
      const healed = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.primaries()).toEqual(['n3', 'n4', 'n5']);
      await withNode(node('n3'), async (redis) => expect(await redis.get(key)).toBe('kept'));
    });

    it('close() leaves no process, dir or listening socket', () => closeAndCheck(cluster));
  });
}
