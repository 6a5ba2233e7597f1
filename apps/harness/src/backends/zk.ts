import { ZkElectionClient, ZkLockClient } from '@fencekit/zk';
import { deployCluster, preflightCluster } from './cluster-deployment.js';
import type { BackendFactory } from './types.js';

/**
 * ZooKeeper on a 3-node ensemble: ephemeral-sequential lock and election, fence = the lock node's
 * czxid. One session per client process serves both; its timeout is the run's TTL (the ensemble runs
 * with tickTime 500 ms, so the floor is 1 s).
 */
export const zkBackend: BackendFactory = {
  name: 'zk',
  description: 'ZooKeeper 3-node ensemble (@fencekit/zk)',
  safeFences: true,
  faults: [
    'pause-client',
    'pause-server',
    'kill',
    'partition',
    'isolate',
    'cut-clients',
    'latency',
    'clock-jump',
    'clock-drift',
  ],
  defaultTtlMs: 2_000,
  nativeElection: true,
  preflight: (provider) => preflightCluster('zookeeper', provider),
  deploy: ({ provider, signal }) => deployCluster('zk', 'zookeeper', 3, provider, signal),
  async connect({ endpoints, namespace, ttlMs }) {
    const root = `/${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const locks = new ZkLockClient({ servers: endpoints, sessionTimeoutMs: Math.max(1_000, ttlMs), root });
    const elections = new ZkElectionClient({ session: locks.session, root });
    return {
      locks,
      elections,
      async close() {
        await elections.close();
        await locks.close();
      },
    };
  },
};
