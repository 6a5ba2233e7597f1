import { UnsupportedFaultError } from './errors.js';
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
    throw new UnsupportedFaultError('docker provider', 'this build', 'not implemented yet');
  }
  return LocalCluster.start(resolved);
}
