import { type Cluster, type ProviderName, startCluster } from '@fencekit/cluster';
import type { RedisClusterConnection } from '@fencekit/redis';
import type { RedisOptions } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

function hostPort(endpoint: string): { host: string; port: number } {
  const [host, port] = endpoint.split(':');
  return { host: host ?? '127.0.0.1', port: Number(port) };
}

/**
 * ioredis options that find the primary of a `redis-sentinel` cluster through its Sentinels. The servers
 * announce their peer proxies (so partitions cut replication); `natMap` sends clients to the client path.
 */
export function sentinelConnection(cluster: Pick<Cluster, 'sentinel' | 'natMap'>): RedisOptions {
  const sentinel = cluster.sentinel;
  if (sentinel === undefined) throw new Error('not a redis-sentinel cluster');
  return {
    name: sentinel.masterName,
    sentinels: sentinel.endpoints.map(hostPort),
    natMap: { ...cluster.natMap },
  };
}

/** Startup nodes and `natMap` of a `redis-cluster` cluster, for `{ connection: { cluster, options } }`. */
export function clusterConnection(cluster: Pick<Cluster, 'endpoints' | 'natMap'>): RedisClusterConnection {
  return { cluster: cluster.endpoints.map(hostPort), options: { natMap: { ...cluster.natMap } } };
}

/** The provider these files start their clusters with: `FENCEKIT_PROVIDER` (local | docker), as clusterGlobalSetup. */
export function providerFromEnv(): ProviderName {
  return process.env.FENCEKIT_PROVIDER === 'docker' ? 'docker' : 'local';
}

/**
 * A replicated deployment of the calling `describe` block's own (these files stop, kill and cut its nodes):
 * started before its tests, closed after them. Returns the deployment once started.
 */
export function ownDeployment(topology: 'redis-sentinel' | 'redis-cluster'): () => Cluster {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster({ topology, provider: providerFromEnv(), startTimeoutMs: 90_000 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);
  return () => {
    if (cluster === undefined) throw new Error(`the ${topology} deployment did not start`);
    return cluster;
  };
}
