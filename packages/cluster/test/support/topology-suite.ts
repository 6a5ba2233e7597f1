import type { ProviderName } from '@fencekit/cluster';
import { expect, it } from 'vitest';
import { redisClient } from './clients.js';
import { withCluster } from './cluster-scope.js';
import { expectEtcdServes, expectRedisServes } from './serves.js';

/** Each topology starts, serves a real client op, and tears down leaving no process, dir, container or network. */
export function topologySuite(provider: ProviderName): void {
  it('redis (1 node) serves SET/GET', () =>
    withCluster({ topology: 'redis', provider }, async (cluster) => {
      expect(cluster.endpoints).toHaveLength(1);
      await expectRedisServes(cluster.endpoints[0]!);
    }));

  it('redis-independent (5 masters) are separate servers', () =>
    withCluster({ topology: 'redis-independent', provider }, async (cluster) => {
      expect(new Set(cluster.endpoints).size).toBe(5);
      const clients = cluster.endpoints.map((e) => redisClient(e));
      try {
        await clients[0]!.set('only-on-n1', '1');
        expect(await clients[0]!.get('only-on-n1')).toBe('1');
        expect(await clients[1]!.get('only-on-n1')).toBeNull();
      } finally {
        for (const c of clients) c.disconnect();
      }
    }));

  it('etcd (1 node) has a leader and serves put/get', () =>
    withCluster({ topology: 'etcd', nodes: 1, provider }, async (cluster) => {
      expect(await cluster.leader()).toMatch(/^n\d$/);
      await expectEtcdServes(cluster.endpoints);
    }));

  // 3-member etcd and ZooKeeper (and 1-node ZooKeeper) start, serve and close in the fault suite.
}
