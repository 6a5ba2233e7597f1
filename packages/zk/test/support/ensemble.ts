import { type Cluster, type ClusterOptions, startCluster } from '@fencekit/cluster';
import { retried } from './retry.js';

/** `startCluster` with up to 3 attempts (see `retried`). A test that cannot get a cluster fails. */
export function startEnsemble(options: ClusterOptions): Promise<Cluster> {
  return retried(3, () => startCluster(options));
}
