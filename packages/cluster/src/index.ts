/** Bad options throw core's `InvalidArgumentError`, re-exported so a user needs only this package. */
export { InvalidArgumentError } from '@fencekit/core';
export { dockerAvailable, serversImageTag } from './docker/engine.js';
export {
  CLIENT_SIDE_FAULTS,
  CleanupFailedError,
  ClusterClosedError,
  ClusterError,
  type ClusterErrorCode,
  ClusterStartError,
  EndpointUnreachableError,
  NodeNotRunningError,
  NodesInUseError,
  ProxyRequiredError,
  RemoteCommandError,
  RemoteTimeoutError,
  ServerFaultRefusedError,
  SshConnectionError,
  UnknownNodeError,
  UnsupportedFaultError,
} from './errors.js';
export { attachCluster, type ExternalClusterOptions } from './external/cluster.js';
export type { EffectQuery, ObservableFault, Observation } from './faults/effects.js';
export type { PromotionFaultName, PromotionQuery } from './faults/promotion.js';
export { type FaultSupportQuery, type TopologyFault, unsupportedFaults } from './faults/support.js';
export { ZOOKEEPER_FOLLOWER_LAG_MS } from './local/zookeeper.js';
export { DEFAULT_NODES } from './options.js';
export { type ServedCluster, serveClusterToParent, startServedCluster } from './serve.js';
export { SSH_TOPOLOGIES, type SshOptions } from './ssh/options.js';
export { startCluster } from './start.js';
export type {
  ClockOptions,
  Cluster,
  ClusterNode,
  ClusterOptions,
  ClusterProvider,
  Direction,
  FailoverLag,
  FailoverOptions,
  Faults,
  LatencyOptions,
  PartitionSpec,
  PromotionFault,
  ProviderName,
  SentinelEndpoints,
  Topology,
  Toxic,
} from './types.js';
