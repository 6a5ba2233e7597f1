import { expect } from 'vitest';
import { etcdClient, withRedis, zookeeperClient } from './clients.js';

/** A real write then read through a real client: "serves" means a client op succeeded, not that a port is open. */

export function expectRedisServes(endpoint: string): Promise<void> {
  return withRedis(endpoint, {}, async (redis) => {
    await redis.set('k', 'v');
    expect(await redis.get('k')).toBe('v');
  });
}

export async function expectEtcdServes(endpoints: readonly string[]): Promise<void> {
  const etcd = etcdClient(endpoints);
  try {
    await etcd.put('k').value('v');
    expect(await etcd.get('k').string()).toBe('v');
  } finally {
    etcd.close();
  }
}

export async function expectZookeeperServes(endpoints: readonly string[]): Promise<void> {
  const zk = await zookeeperClient(endpoints);
  try {
    await zk.create('/fencekit', 'v');
    expect(await zk.get('/fencekit')).toBe('v');
  } finally {
    zk.close();
  }
}
