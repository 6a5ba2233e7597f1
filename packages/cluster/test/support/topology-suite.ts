import { type ProviderName, startCluster } from '@fencekit/cluster';
import { expect, it } from 'vitest';
import { etcdClient, redisClient } from './clients.js';
import { footprint, leftovers } from './leftovers.js';

/** Each topology starts, serves a real client op, and tears down leaving no process, dir, container or network. */
export function topologySuite(provider: ProviderName): void {
  it('redis (1 node) serves SET/GET', async () => {
    const cluster = await startCluster({ topology: 'redis', provider });
    const print = footprint(cluster);
    try {
      expect(cluster.endpoints).toHaveLength(1);
      const redis = redisClient(cluster.endpoints[0]!);
      try {
        await redis.set('k', 'v');
        expect(await redis.get('k')).toBe('v');
      } finally {
        redis.disconnect();
      }
    } finally {
      await cluster.close();
      await cluster.close(); // idempotent
    }
    expect(leftovers(print)).toEqual([]);
  });

  it('redis-independent (5 masters) are separate servers', async () => {
    const cluster = await startCluster({ topology: 'redis-independent', provider });
    const print = footprint(cluster);
    try {
      expect(new Set(cluster.endpoints).size).toBe(5);
      const clients = cluster.endpoints.map((e) => redisClient(e));
      try {
        await clients[0]!.set('only-on-n1', '1');
        expect(await clients[0]!.get('only-on-n1')).toBe('1');
        expect(await clients[1]!.get('only-on-n1')).toBeNull();
      } finally {
        for (const c of clients) c.disconnect();
      }
    } finally {
      await cluster.close();
    }
    expect(leftovers(print)).toEqual([]);
  });

  it('etcd (1 node) has a leader and serves put/get', async () => {
    const cluster = await startCluster({ topology: 'etcd', nodes: 1, provider });
    const print = footprint(cluster);
    try {
      expect(await cluster.leader()).toMatch(/^n\d$/);
      const etcd = etcdClient(cluster.endpoints);
      try {
        await etcd.put('k').value('v');
        expect(await etcd.get('k').string()).toBe('v');
      } finally {
        etcd.close();
      }
    } finally {
      await cluster.close();
    }
    expect(leftovers(print)).toEqual([]);
  });

  // 3-member etcd and ZooKeeper (and 1-node ZooKeeper) start, serve and close in the fault suite.
}
