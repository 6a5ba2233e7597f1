import { injectCluster } from '@fencekit/cluster/vitest';
import { describeElectionConformance, describeLockConformance } from '@fencekit/core/testing';
import { ZkElection, ZkLockClient } from '@fencekit/zk';

const { endpoints } = injectCluster('zookeeper');
const servers = endpoints.join(',');
/** Short, so the suite's "holder went away" checks do not wait long; the ensemble's minimum is 1 s. */
const sessionTimeoutMs = 2_000;

describeLockConformance('zookeeper', {
  createClient: async () => new ZkLockClient({ servers, sessionTimeoutMs }),
  // Fair: FIFO by sequence number. Expiry on: a lease not extended within ttlMs is given up by its
  // client, which deletes the lock node (a dead client's node goes with its session instead).
  capabilities: { fair: true, expiry: true },
  // Generous for a shared, loaded machine: the suite's short TTL and every wait scaled up.
  ttlMs: 1_000,
  timeScale: 3,
  resourcePrefix: 'zk-conformance',
});

describeElectionConformance('zookeeper', {
  createElection: async (name) => new ZkElection(name, { servers, sessionTimeoutMs }),
  ttlMs: sessionTimeoutMs,
  timeScale: 3,
});
