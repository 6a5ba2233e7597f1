import { existsSync } from 'node:fs';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { describe, expect, it } from 'vitest';
import { etcdClient, redisClient, zookeeperClient } from './support/clients.js';
import { alive } from './support/leftovers.js';

/** Each topology starts from the Debian binaries, serves a real client op, and leaves nothing behind. */
describe('local provider topologies', () => {
  async function expectGone(cluster: Cluster, rootDir: string) {
    const pids = cluster.nodes.map((n) => n.pid);
    await cluster.close();
    await cluster.close(); // idempotent
    for (const pid of pids) expect(alive(pid), `pid ${pid} still alive`).toBe(false);
    expect(existsSync(rootDir)).toBe(false);
  }

  it('redis (1 node) serves SET/GET', async () => {
    const cluster = await startCluster({ topology: 'redis' });
    const rootDir = (cluster as unknown as { rootDir: string }).rootDir;
    expect(cluster.endpoints).toHaveLength(1);
    const redis = redisClient(cluster.endpoints[0]!);
    try {
      await redis.set('k', 'v');
      expect(await redis.get('k')).toBe('v');
    } finally {
      redis.disconnect();
    }
    await expectGone(cluster, rootDir);
  });

  it('redis-independent (5 masters) are separate servers', async () => {
    const cluster = await startCluster({ topology: 'redis-independent' });
    const rootDir = (cluster as unknown as { rootDir: string }).rootDir;
    expect(new Set(cluster.endpoints).size).toBe(5);
    const clients = cluster.endpoints.map((e) => redisClient(e));
    try {
      await clients[0]!.set('only-on-n1', '1');
      expect(await clients[0]!.get('only-on-n1')).toBe('1');
      expect(await clients[1]!.get('only-on-n1')).toBeNull();
    } finally {
      for (const c of clients) c.disconnect();
    }
    await expectGone(cluster, rootDir);
  });

  it.each([1, 3])('etcd (%i nodes) serves put/get and has a leader', async (nodes) => {
    const cluster = await startCluster({ topology: 'etcd', nodes });
    const rootDir = (cluster as unknown as { rootDir: string }).rootDir;
    expect(await cluster.leader()).toMatch(/^n\d$/);
    const etcd = etcdClient(cluster.endpoints);
    try {
      await etcd.put('k').value('v');
      expect(await etcd.get('k').string()).toBe('v');
    } finally {
      etcd.close();
    }
    await expectGone(cluster, rootDir);
  });

  it.each([1, 3])('zookeeper (%i nodes) serves create/get', async (nodes) => {
    const cluster = await startCluster({ topology: 'zookeeper', nodes });
    const rootDir = (cluster as unknown as { rootDir: string }).rootDir;
    expect(await cluster.leader()).toMatch(/^n\d$/);
    const zk = await zookeeperClient(cluster.endpoints);
    try {
      await zk.create('/fencekit', 'v');
      expect(await zk.get('/fencekit')).toBe('v');
    } finally {
      zk.close();
    }
    await expectGone(cluster, rootDir);
  });
});
