import type { Cluster, ProviderName } from '@fencekit/cluster';
import type { RedisClusterConnection } from '@fencekit/redis';
import type { RedisOptions } from 'ioredis';

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
