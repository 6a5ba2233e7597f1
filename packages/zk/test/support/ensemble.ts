import {
  type Cluster,
  type ClusterOptions,
  startCluster,
  ZOOKEEPER_FOLLOWER_LAG_MS,
} from '@fencekit/cluster';
import { retried } from './retry.js';

/** `startCluster` with up to 3 attempts (see `retried`). A test that cannot get a cluster fails. */
export function startEnsemble(options: ClusterOptions): Promise<Cluster> {
  return retried(3, () => startCluster(options));
}

/**
 * The test ensembles' follower lag (syncLimit × tickTime): every client of them passes it as
 * `followerLagMs`, and their session timeouts must exceed it.
 */
export const followerLagMs = ZOOKEEPER_FOLLOWER_LAG_MS;
