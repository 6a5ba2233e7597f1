import { type Cluster, type EffectQuery, type ProviderName, UnknownNodeError } from '@fencekit/cluster';
import { InvalidArgumentError } from '@fencekit/core';
import { expect, it } from 'vitest';
import { describeCluster } from './cluster-scope.js';

/** Observes one phase and expects it seen (or not), returning what the probe said for the failure message. */
async function expectObserved(cluster: Cluster, query: EffectQuery, seen = true): Promise<void> {
  const observation = await cluster.faults.observe({ timeoutMs: 5_000, ...query });
  expect(observation.seen, `${query.fault} ${query.phase}: ${observation.detail}`).toBe(seen);
  expect(observation.afterMs).toBeGreaterThanOrEqual(0);
}

/** Each fault's independent probe sees its effect after the act and sees it gone after the heal. */
export function effectsSuite(provider: ProviderName): void {
  describeCluster('redis: probes of each fault', { topology: 'redis', proxy: true, provider }, (current) => {
    it('nothing is seen when nothing was done', async () => {
      const cluster = current();
      for (const fault of ['kill', 'pause', 'cutClients', 'clock'] as const) {
        await expectObserved(cluster, { fault, node: 'n1', phase: 'started', timeoutMs: 300 }, false);
      }
      await expect(cluster.faults.observe({ fault: 'meteor' as never, phase: 'started' })).rejects.toThrow(
        InvalidArgumentError,
      );
      await expect(cluster.faults.observe({ fault: 'kill', phase: 'started' })).rejects.toThrow(/node id/);
      await expect(cluster.faults.observe({ fault: 'kill', node: 'n9', phase: 'healed' })).rejects.toThrow(
        UnknownNodeError,
      );
    });

    it('pause: state T, then running again', async () => {
      const cluster = current();
      await cluster.faults.pause('n1');
      await expectObserved(cluster, { fault: 'pause', node: 'n1', phase: 'started' });
      await cluster.faults.resume('n1');
      await expectObserved(cluster, { fault: 'pause', node: 'n1', phase: 'healed' });
    });

    it('kill: the process gone, then a restarted one serving', async () => {
      const cluster = current();
      await cluster.faults.kill('n1');
      await expectObserved(cluster, { fault: 'kill', node: 'n1', phase: 'started' });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'kill', node: 'n1', phase: 'healed' });
    });

    it('cutClients and latency: requests through the proxy unanswered, then slowed, then back', async () => {
      const cluster = current();
      await cluster.faults.cutClients('n1');
      await expectObserved(cluster, { fault: 'cutClients', node: 'n1', phase: 'started' });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'cutClients', node: 'n1', phase: 'healed' });
      await cluster.faults.latency('n1', { ms: 150 });
      await expectObserved(cluster, { fault: 'latency', node: 'n1', phase: 'started' });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'latency', node: 'n1', phase: 'healed' });
    });

    it("clock: Redis' TIME jumps, then drifts, then agrees with ours again", async () => {
      const cluster = current();
      // +2 s: a Redis jump's effect lasts its offset past the heal (what was granted under it), within the bound.
      await cluster.faults.clock('n1', { offsetMs: 2_000 });
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'started' });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'healed' });
      await cluster.faults.clock('n1', { offsetMs: 0, rate: 3 });
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'started' });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'healed' });
    });
  });
}

/** Probes that need a consensus topology; one provider is enough, the probes read the same server answers. */
export function consensusEffectsSuite(provider: ProviderName): void {
  describeCluster('etcd: partition probe', { topology: 'etcd', nodes: 3, provider }, (current) => {
    it('an isolated member loses the leader; after heal all agree again', async () => {
      const cluster = current();
      await expectObserved(cluster, { fault: 'partition', phase: 'started', timeoutMs: 300 }, false);
      const leader = await cluster.waitForLeader();
      const follower = cluster.nodes.find((n) => n.id !== leader)!.id;
      await cluster.faults.partition({ isolate: follower });
      await expectObserved(cluster, {
        fault: 'partition',
        node: follower,
        phase: 'started',
        timeoutMs: 10_000,
      });
      await cluster.faults.heal();
      await expectObserved(cluster, {
        fault: 'partition',
        node: follower,
        phase: 'healed',
        timeoutMs: 10_000,
      });
    });
  });

  describeCluster('zookeeper: partition probe', { topology: 'zookeeper', nodes: 3, provider }, (current) => {
    // Within a second and a half: before the members notice (syncLimit), as a short scheduled fault needs.
    it('an isolated leader is seen at once through a quorum request it cannot serve; after heal it serves', async () => {
      const cluster = current();
      const leader = await cluster.waitForLeader();
      await expectObserved(
        cluster,
        { fault: 'partition', node: leader, phase: 'started', timeoutMs: 300 },
        false,
      );
      await cluster.faults.partition({ isolate: leader });
      await expectObserved(cluster, { fault: 'partition', node: leader, phase: 'started', timeoutMs: 1_500 });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'partition', node: leader, phase: 'healed', timeoutMs: 20_000 });
    });
  });

  describeCluster('zookeeper: clock probe', { topology: 'zookeeper', nodes: 1, provider }, (current) => {
    it("a +30 s jump shows in ZooKeeper's uptime; after heal it runs at real speed; a second jump shows again", async () => {
      const cluster = current();
      await cluster.faults.clock('n1', { offsetMs: 30_000 });
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'started' });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'healed' });
      // The JVM's monotonic clock kept its 30 s lead through the heal (it never steps back); the next jump must
      // still move it forward, or a fault scheduled twice on one node would do nothing the second time.
      await cluster.faults.clock('n1', { offsetMs: 30_000 });
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'started' });
      await cluster.faults.heal();
      await expectObserved(cluster, { fault: 'clock', node: 'n1', phase: 'healed' });
    });
  });
}
