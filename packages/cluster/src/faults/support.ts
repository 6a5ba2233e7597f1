import { RECIPES } from '../local/recipes.js';
import { clockShimError, clockShimPath } from '../native.js';
import type { Topology } from '../types.js';

/** The server faults whose effect depends on what the topology is (proxy faults depend only on `proxy: true`). */
export type TopologyFault = 'partition' | 'clock' | 'failover' | 'splitBrain';

export interface FaultSupportQuery {
  readonly topology: Topology;
  /** Default: the topology's default node count. */
  readonly nodes?: number;
  /**
   * Whether the clock shim is (or would be) loaded into the servers. Default: whether it can be built here, as
   * `startCluster` decides when its `clockShim` option is left at its default.
   */
  readonly clockShim?: boolean;
}

/**
 * Why each fault a cluster of this shape cannot apply would do nothing, so that a caller can refuse it before a
 * run starts and the nemesis throws `UnsupportedFaultError` with the same reason instead of recording an act that
 * changed nothing. An absent key means the fault can take effect.
 */
export function unsupportedFaults(query: FaultSupportQuery): Partial<Record<TopologyFault, string>> {
  const recipe = RECIPES[query.topology];
  const reasons: Partial<Record<TopologyFault, string>> = {};
  if (recipe.peerPortCount === 0) {
    reasons.partition = `the ${query.topology} servers never talk to each other: there is no server-to-server link to cut`;
  } else if (query.nodes === 1) {
    reasons.partition = 'a single server has no peer to be cut from';
  }
  if (!recipe.replication) {
    const why = `there is no replica to promote on ${query.topology}: only redis-sentinel and redis-cluster replicate`;
    reasons.failover = why;
    reasons.splitBrain = why;
  }
  if (!recipe.clockShim) {
    reasons.clock =
      "etcd is a Go binary whose runtime reads the clock through the vDSO, bypassing libc, so an LD_PRELOAD shim can't skew it";
  } else if (query.clockShim === false) {
    // Not loaded: either it could not be built (no gcc), or the cluster was started with clockShim: false.
    reasons.clock = clockShimError() ?? 'the servers were started without the clock shim (clockShim: false)';
  } else if (query.clockShim === undefined && !clockShimPath()) {
    reasons.clock = clockShimError() ?? 'the clock shim could not be built';
  }
  return reasons;
}
