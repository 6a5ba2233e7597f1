import { type Cluster, type ClusterOptions, startCluster } from '@fencekit/cluster';

/**
 * `startCluster` with up to 3 attempts: on a loaded shared machine a ZooKeeper ensemble occasionally
 * misses its first leader election within the start timeout. A test that cannot get a cluster fails.
 */
export async function startEnsemble(options: ClusterOptions): Promise<Cluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster(options);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}
