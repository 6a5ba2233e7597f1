import { sentinelConnection } from './support/deployments.js';
import { describeReplicatedRedis } from './support/replicated-suite.js';

// A primary, two replicas and three Sentinels (@fencekit/cluster's redis-sentinel), for this file alone.
describeReplicatedRedis({
  topology: 'redis-sentinel',
  name: 'redis through Sentinel',
  connect: sentinelConnection,
  wakeUp: 'PUBLISH on the client channel, its subscriber found by the Sentinels',
  replicasPerPrimary: 2,
});
