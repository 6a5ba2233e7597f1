import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { type Cluster, type ClusterNode, type ProviderName, startCluster } from '@fencekit/cluster';
import { Redis, Cluster as RedisCluster } from 'ioredis';
import { expect } from 'vitest';
import { alive, footprint, leftovers } from './leftovers.js';

/** A direct client of one data node (its client endpoint), short timeouts, no retries past one. */
export function nodeClient(node: ClusterNode): Redis {
  const [host, port] = node.endpoint.split(':');
  const redis = new Redis({
    host,
    port: Number(port),
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    commandTimeout: 3000,
    retryStrategy: () => 200,
  });
  redis.on('error', () => undefined);
  return redis;
}

export async function withNode<T>(node: ClusterNode, body: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = nodeClient(node);
  try {
    return await body(redis);
  } finally {
    redis.disconnect();
  }
}

/** An ioredis client that finds the primary through the cluster's Sentinels, mapping announced addresses. */
export function sentinelClient(cluster: Cluster): Redis {
  const sentinel = cluster.sentinel!;
  const redis = new Redis({
    name: sentinel.masterName,
    sentinels: sentinel.endpoints.map((e) => ({ host: e.split(':')[0], port: Number(e.split(':')[1]) })),
    natMap: { ...cluster.natMap } as Record<string, { host: string; port: number }>,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    commandTimeout: 3000,
    sentinelRetryStrategy: () => 200,
  });
  redis.on('error', () => undefined);
  return redis;
}

/** An ioredis Cluster seeded with every node's client endpoint, mapping the announced addresses. */
export function clusterClient(cluster: Cluster): RedisCluster {
  const client = new RedisCluster(
    cluster.endpoints.map((e) => ({ host: e.split(':')[0], port: Number(e.split(':')[1]) })),
    {
      natMap: { ...cluster.natMap } as Record<string, { host: string; port: number }>,
      lazyConnect: true,
      redisOptions: { commandTimeout: 3000, maxRetriesPerRequest: 1 },
      clusterRetryStrategy: () => 200,
    },
  );
  client.on('error', () => undefined);
  return client;
}

/** Polls a node until `key` reads `value` (replication is asynchronous); bounded. */
export async function eventuallyReads(node: ClusterNode, key: string, value: string | null): Promise<void> {
  await withNode(node, async (redis) => {
    let last: string | null = null;
    for (let i = 0; i < 50; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      last = await redis.get(key).catch(() => 'error');
      if (last === value) return;
    }
    expect(last).toBe(value);
  });
}

/** The local provider's Sentinel logs (their last lines), for a failure message; empty on docker. */
export function sentinelLogs(cluster: Cluster, lines = 25): string {
  const internals = cluster as unknown as {
    members: ReadonlyArray<{ id: string; layout?: { dir: string } }>;
  };
  return internals.members
    .map((m) => {
      if (!m.layout) return '';
      try {
        const text = readFileSync(`${m.layout.dir}/sentinel.log`, 'utf8');
        return `--- ${m.id} sentinel.log\n${text.split('\n').slice(-lines).join('\n')}`;
      } catch {
        return '';
      }
    })
    .join('\n');
}

/** The pids of every process a local cluster started: servers and their Sentinels. */
export function allPids(cluster: Cluster): number[] {
  const internals = cluster as unknown as {
    members: ReadonlyArray<{ companions?: ReadonlyArray<{ pid?: number }> }>;
  };
  const companions = internals.members.flatMap((m) => (m.companions ?? []).map((c) => c.pid));
  return [...cluster.nodes.map((n) => n.pid), ...companions].filter((p): p is number => p !== undefined);
}

/** Starts a cluster shared by a file's tests; `closeAndCheck` closes it (twice) and asserts nothing is left. */
export async function startReplicated(
  topology: 'redis-sentinel' | 'redis-cluster',
  provider: ProviderName,
): Promise<Cluster> {
  return startCluster({ topology, provider, startTimeoutMs: 90_000 });
}

/** Whether anything still accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Closes (twice: idempotent) and checks no process (servers, Sentinels), dir or listening socket is left. */
export async function closeAndCheck(cluster: Cluster): Promise<void> {
  const print = footprint(cluster);
  const pids = allPids(cluster);
  const ports = [
    ...cluster.nodes.flatMap((n) => [n.endpoint, n.directEndpoint]),
    ...(cluster.sentinel?.endpoints ?? []),
    ...Object.keys(cluster.natMap ?? {}),
  ].map((e) => Number(e.split(':')[1]));
  await cluster.close();
  await cluster.close();
  expect(leftovers(print)).toEqual([]);
  expect(pids.filter(alive)).toEqual([]);
  const open = [];
  for (const port of ports) if (await listening(port)) open.push(port);
  expect(open).toEqual([]);
}
