import {
  type Cluster,
  InvalidArgumentError,
  startCluster,
  UnsupportedFaultError,
  UnsupportedTopologyError,
} from '@fencekit/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeAndCheck,
  eventuallyReads,
  sentinelClient,
  startReplicated,
  withNode,
} from './support/replicated.js';

/**
 * redis-sentinel on real processes: a primary, two replicas, a Sentinel beside each. One cluster for the file
 * (a start takes ~10 s: the Sentinels find each other through hello messages every 2 s); the graceful failover
 * runs before the kill, so the Sentinels' 8 s wait between failovers of one primary has passed by then.
 */
describe('redis-sentinel (local)', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startReplicated('redis-sentinel');
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
    expect(started.seen, started.detail).toBe(true);
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
    expect(started.seen, started.detail).toBe(true);
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

  it('close() leaves no process (servers, Sentinels), dir or listening socket', () => closeAndCheck(cluster));
});

describe('refusals', () => {
  it('failover and splitBrain are refused where there is no replica to promote', async () => {
    const single = await startCluster({ topology: 'redis' });
    try {
      await expect(single.faults.failover()).rejects.toThrow(UnsupportedFaultError);
      await expect(single.faults.splitBrain()).rejects.toThrow(/no replica to promote/);
      await expect(
        single.faults.observe({ fault: 'failover', node: 'n1', phase: 'started' }),
      ).rejects.toThrow(UnsupportedFaultError);
    } finally {
      await single.close();
    }
  });

  it('the docker provider refuses the replicated topologies with a typed error saying why', async () => {
    for (const topology of ['redis-sentinel', 'redis-cluster'] as const) {
      await expect(startCluster({ topology, provider: 'docker' })).rejects.toThrow(UnsupportedTopologyError);
    }
  });

  it('node counts the replicated topologies cannot run are bad arguments', async () => {
    await expect(startCluster({ topology: 'redis-sentinel', nodes: 2 })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(startCluster({ topology: 'redis-cluster', nodes: 3 })).rejects.toThrow(/nodes/);
  });
});
