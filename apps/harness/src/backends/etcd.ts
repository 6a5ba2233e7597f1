import { EtcdClient } from '@fencekit/etcd';
import { deployCluster, preflightCluster } from './cluster-deployment.js';
import type { BackendFactory } from './types.js';

/**
 * etcd on a 3-node cluster: lease + keep-alive, lock keyed by create revision (the fence), election
 * with observe. etcd's Go runtime bypasses libc, so clock faults do not apply.
 */
export const etcdBackend: BackendFactory = {
  name: 'etcd',
  description: 'etcd 3-node cluster (@fencekit/etcd)',
  safeFences: true,
  faults: ['pause-client', 'pause-server', 'kill', 'partition', 'isolate', 'cut-clients', 'latency'],
  defaultTtlMs: 2_000,
  nativeElection: true,
  preflight: (provider) => preflightCluster('etcd', provider),
  deploy: ({ provider, signal }) => deployCluster('etcd', 'etcd', 3, provider, signal),
  async connect({ endpoints, namespace }) {
    const client = new EtcdClient({ hosts: endpoints, prefix: namespace });
    return { locks: client, elections: client, close: () => client.close() };
  },
};
