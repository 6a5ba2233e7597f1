import { LocalCluster } from './local/cluster.js';
import { resolveOptions } from './options.js';
import type { Cluster, ClusterOptions } from './types.js';

/**
 * Starts a cluster of real servers and resolves once every node serves clients (etcd has a leader, ZooKeeper
 * reports a Mode). On failure or abort, whatever was started is torn down before the promise rejects.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const resolved = resolveOptions(options);
  resolved.signal?.throwIfAborted();
  if (resolved.provider === 'docker') {
    // Loaded on demand: the local provider must work where testcontainers' dependencies are never touched.
    const { DockerCluster } = await import('./docker/cluster.js');
    return DockerCluster.start(resolved);
  }
  return LocalCluster.start(resolved);
}
