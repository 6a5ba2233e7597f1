import type { Cluster } from '@fencekit/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeAndCheck,
  eventuallyReads,
  sentinelClient,
  startReplicated,
  withNode,
} from './support/replicated.js';

/** Partitions on redis-sentinel cut replication and Sentinel links (they pass the peer proxies), never clients. */
describe('redis-sentinel (local): partitions and split brain', () => {
  let cluster: Cluster;
  const node = (id: string) => cluster.nodes.find((n) => n.id === id)!;
  beforeAll(async () => {
    cluster = await startReplicated('redis-sentinel');
  });
  afterAll(() => cluster?.close());

  it('an isolated replica loses its replication link (seen by the probe) and gets it back on heal', async () => {
    await cluster.faults.partition({ isolate: 'n3' });
    const cut = await cluster.faults.observe({ fault: 'partition', phase: 'started', timeoutMs: 15_000 });
    expect(cut.seen, cut.detail).toBe(true);
    expect(cut.detail).toMatch(/n3: replica, link down/);
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
    expect(started.seen, started.detail).toBe(true);
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

  it('close() leaves no process (servers, Sentinels), dir or listening socket', () => closeAndCheck(cluster));
});
