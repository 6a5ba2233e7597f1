import { execFileSync } from 'node:child_process';
import type { Cluster, ClusterNode, ProviderName } from '@fencekit/cluster';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAndCheck, nodeClient, startReplicated, withNode } from './replicated.js';

/**
 * `failover({ how: 'lagged' })` on real servers (processes or containers): the primary acknowledges writes its
 * replicas never get, then dies, and the replica promoted lacks them. A plain kill loses nothing here (replication
 * keeps up within a millisecond on loopback or a bridge: see the kill tests in the topology suites), so this is the
 * failover that shows what replication lag does to a lock in production. The local provider cuts the links in its
 * fault proxies, the Docker provider with iptables rules inside the containers.
 */

/**
 * Writes `prefix-0`, `prefix-1`… to `node` one after another until `until` settles, and returns the keys the node
 * acknowledged (the last ones may be answered by a dead node: those are not counted).
 */
async function writeUntil(node: ClusterNode, prefix: string, until: Promise<unknown>): Promise<string[]> {
  let done = false;
  // Settles either way without a rejection of its own: the caller awaits `until` and sees its error.
  const settled = until.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  const redis = nodeClient(node);
  const acked: string[] = [];
  try {
    for (let i = 0; !done && i < 100_000; i++) {
      const key = `${prefix}-${i}`;
      const reply = await redis.set(key, 'acked').catch(() => undefined);
      if (reply === 'OK') acked.push(key);
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    redis.disconnect();
  }
  await settled;
  return acked;
}

/** Which of `keys` `node` does not have (a replica is read with READONLY, for Redis Cluster). */
async function missingOn(node: ClusterNode, keys: readonly string[]): Promise<string[]> {
  return withNode(node, async (redis) => {
    await redis.call('READONLY').catch(() => undefined); // a Sentinel-managed Redis has no cluster mode
    const values = keys.length === 0 ? [] : await redis.mget(...keys);
    return keys.filter((_k, i) => values[i] !== 'acked');
  });
}

/**
 * The member a Sentinel names primary, polled (bounded, 10 s: its peers' hello messages come every second) until it
 * is `wanted`; the last one named otherwise.
 */
async function sentinelNames(
  cluster: Cluster,
  endpoint: string,
  wanted: string,
): Promise<string | undefined> {
  const [host, port] = endpoint.split(':');
  const sentinel = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
  sentinel.on('error', () => undefined);
  let named: string | undefined;
  try {
    for (let i = 0; i < 50; i++) {
      const reply = (await sentinel
        .call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'fencekit')
        .catch(() => undefined)) as [string, string] | undefined;
      const direct = reply ? cluster.natMap?.[`${reply[0]}:${reply[1]}`] : undefined;
      named = cluster.nodes.find((n) => Number(n.endpoint.split(':')[1]) === direct?.port)?.id;
      if (named === wanted) return named;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return named;
  } finally {
    sentinel.disconnect();
  }
}

/** What a node answers to ROLE: 'master' or 'slave'. */
function roleOf(node: ClusterNode): Promise<string> {
  return withNode(node, async (redis) => ((await redis.call('ROLE')) as string[])[0]!);
}

/**
 * The rules of the nemesis' FENCEKIT chain inside each container, read with `docker exec` (not through the
 * provider's own shell, so a rule it failed to flush is seen); nothing for a node with no container. The whole
 * filter table is listed: a container no cut touched has no such chain, and iptables-nft 1.8.9 calls a missing
 * chain 'incompatible' rather than absent.
 */
function chainRules(cluster: Cluster): string[] {
  return cluster.nodes.flatMap((n) => {
    if (!n.containerId) return [];
    const out = execFileSync('docker', ['exec', n.containerId, 'iptables', '-w', '-S'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    return out
      .split('\n')
      .filter((l) => l.startsWith('-A FENCEKIT '))
      .map((l) => `${n.id}: ${l}`);
  });
}

/**
 * Closes the cluster and checks nothing is left; under Docker also that the host's own filter table never got the
 * nemesis' chain (its rules belong in the containers' network namespaces, gone with them).
 */
async function closeAndCheckAll(cluster: Cluster, provider: ProviderName): Promise<void> {
  await closeAndCheck(cluster);
  if (provider !== 'docker') return;
  const host = execFileSync('iptables', ['-w', '-S'], { encoding: 'utf8', timeout: 20_000 });
  expect(host.split('\n').filter((l) => l.includes('FENCEKIT'))).toEqual([]);
}

/** A hash tag every key shares, so on Redis Cluster they all live on slot 0's shard (n1, replica n4). */
const SLOT0 = '{3560}'; // CLUSTER KEYSLOT {3560}x = 0

export function laggedFailoverSuite(provider: ProviderName): void {
  describe('redis-cluster', () => {
    let cluster: Cluster;
    const node = (id: string) => cluster.nodes.find((n) => n.id === id)!;
    beforeAll(async () => {
      cluster = await startReplicated('redis-cluster', provider);
    });
    afterAll(() => cluster?.close());

    it('n1 acknowledges writes n4 never gets, is killed, and n4 is promoted without them; heal brings n1 back a replica', async () => {
      const slot = await withNode(node('n1'), (redis) => redis.call('CLUSTER', 'KEYSLOT', `${SLOT0}x`));
      expect(slot).toBe(0);
      await withNode(node('n1'), (redis) => redis.set(`${SLOT0}before`, 'acked'));
      // Replicated before the fault: what the promoted replica must still have.
      for (let i = 0; i < 50 && (await missingOn(node('n4'), [`${SLOT0}before`])).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      const failover = cluster.faults.failover({ how: 'lagged', node: 'n1', lagMs: 1000 });
      const acked = await writeUntil(node('n1'), `${SLOT0}during`, failover);
      const { from, lag } = await failover;
      expect(from).toBe('n1');
      expect(lag?.windowMs).toBeGreaterThanOrEqual(1000);
      // The primary's stream ran ahead of its replica's: bytes acknowledged to clients that n4 never applied.
      expect(lag?.primaryOffset).toBeGreaterThan(lag?.replicaOffsets.n4 ?? Number.POSITIVE_INFINITY);

      const started = await cluster.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: 30_000,
      });
      expect(started.seen, started.detail).toBe(true);
      expect(started.detail).toMatch(/n4 promoted/);
      expect(acked.length).toBeGreaterThan(0);
      const lost = await missingOn(node('n4'), acked);
      expect(lost.length, `acknowledged by n1: ${acked.length}, lost: ${lost.length}`).toBeGreaterThan(0);
      expect(await missingOn(node('n4'), [`${SLOT0}before`])).toEqual([]);

      await cluster.faults.heal();
      const healed = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.primaries()).toEqual(['n2', 'n3', 'n4']);
      expect(await roleOf(node('n1'))).toBe('slave');
      // The restarted n1 resynced from n4: it does not bring the lost writes back.
      expect((await missingOn(node('n1'), lost)).length).toBe(lost.length);
      expect(chainRules(cluster)).toEqual([]);
    });

    it('a lag window beyond 2 s is refused before anything is touched', async () => {
      await expect(cluster.faults.failover({ how: 'lagged', lagMs: 5000 })).rejects.toThrow(
        /failover\.lagMs/,
      );
    });

    it('close() leaves no process, dir, container, network, iptables rule or listening socket', () =>
      closeAndCheckAll(cluster, provider));
  });

  describe('redis-sentinel', () => {
    let cluster: Cluster;
    const node = (id: string) => cluster.nodes.find((n) => n.id === id)!;
    beforeAll(async () => {
      cluster = await startReplicated('redis-sentinel', provider);
    });
    afterAll(() => cluster?.close());

    it('the primary acknowledges writes neither replica gets, is killed, and the Sentinels promote a replica without them', async () => {
      const [primary] = await cluster.primaries();
      expect(primary).toBe('n1');
      const failover = cluster.faults.failover({ how: 'lagged', lagMs: 1000 });
      const acked = await writeUntil(node('n1'), 'during', failover);
      const { from, lag } = await failover;
      expect(from).toBe('n1');
      for (const replica of ['n2', 'n3']) {
        expect(lag?.primaryOffset).toBeGreaterThan(lag?.replicaOffsets[replica] ?? Number.POSITIVE_INFINITY);
      }
      const started = await cluster.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: 30_000,
      });
      expect(started.seen, started.detail).toBe(true);
      const [promoted] = await cluster.primaries();
      expect(['n2', 'n3']).toContain(promoted);
      expect(acked.length).toBeGreaterThan(0);
      const lost = await missingOn(node(promoted!), acked);
      expect(lost.length, `acknowledged by n1: ${acked.length}, lost: ${lost.length}`).toBeGreaterThan(0);
      // Before any heal, every Sentinel follows the promotion, n1's own too: left cut off, it would keep naming
      // n1, and a client asking it would be sent to n1 once it restarts, empty.
      for (const endpoint of cluster.sentinel!.endpoints) {
        expect(await sentinelNames(cluster, endpoint, promoted!), `Sentinel at ${endpoint}`).toBe(promoted);
      }

      await cluster.faults.heal();
      const healed = await cluster.faults.observe({ fault: 'failover', node: from, phase: 'healed' });
      expect(healed.seen, healed.detail).toBe(true);
      expect(await cluster.primaries()).toEqual([promoted]);
      expect(await roleOf(node('n1'))).toBe('slave');
      expect(chainRules(cluster)).toEqual([]);
    });

    it('close() leaves no process (servers, Sentinels), dir, container, network, iptables rule or listening socket', () =>
      closeAndCheckAll(cluster, provider));
  });
}
