import { injectCluster } from '@fencekit/cluster/vitest';
import { describeReadWriteLockConformance, describeSemaphoreConformance } from '@fencekit/core/testing';
import { ZkSharedLockClient } from '@fencekit/zk';
import { followerLagMs } from './support/ensemble.js';

const { endpoints } = injectCluster('zookeeper');
const servers = endpoints.join(',');
/** As the mutex's conformance run: short, but twice the ensemble's follower lag. */
const sessionTimeoutMs = 4_000;

const createClient = async () => new ZkSharedLockClient({ servers, sessionTimeoutMs, followerLagMs });

describeSemaphoreConformance('zookeeper', {
  createClient,
  ttlMs: 1_000,
  timeScale: 3,
  resourcePrefix: 'zk-shared-conformance',
});

describeReadWriteLockConformance('zookeeper', {
  createClient,
  ttlMs: 1_000,
  timeScale: 3,
  resourcePrefix: 'zk-shared-conformance',
});
