import { EtcdClient, guardedPut } from '@fencekit/etcd';
import type { BackendFactory } from './types.js';

/** Server start-up code, loaded only by the coordinator: client processes never touch it. */
const servers = () => import('./cluster-deployment.js');

/**
 * etcd on a 3-node cluster: lease + keep-alive, lock keyed by create revision (the fence), election
 * with observe. etcd's Go runtime bypasses libc, so clock faults do not apply.
 */
export const etcdBackend: BackendFactory = {
  name: 'etcd',
  description: 'etcd 3-node cluster (@fencekit/etcd)',
  safeFences: true,
  faults: ['pause-client', 'pause-server', 'kill', 'partition', 'isolate', 'cut-clients', 'latency'],
  defaultTtlMs: 1_000,
  nativeElection: true,
  async preflight(provider) {
    await (await servers()).preflightCluster('etcd', provider);
  },
  async deploy({ provider, signal }) {
    return (await servers()).deployCluster('etcd', 'etcd', 3, provider, signal);
  },
  async connect({ endpoints, namespace }) {
    const client = new EtcdClient({ hosts: endpoints, prefix: namespace });
    return {
      locks: client,
      elections: client,
      guardedWrite: (lease, key, value) => guardedPut(lease, `${namespace}/data/${key}`, value),
      close: () => client.close(),
    };
  },
};
