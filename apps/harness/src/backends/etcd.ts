import { EtcdClient, guardedPut } from '@fencekit/etcd';
import { clusterBackend } from './cluster-backend.js';

/**
 * etcd on a 3-node cluster: lease + keep-alive, lock keyed by create revision (the fence), election
 * with observe. etcd's Go runtime bypasses libc, so clock faults do not apply.
 */
export const etcdBackend = clusterBackend({
  name: 'etcd',
  description: 'etcd 3-node cluster (@fencekit/etcd)',
  topology: 'etcd',
  nodes: 3,
  safeFences: true,
  faults: [
    'pause-client',
    'pause-server',
    'kill',
    'partition',
    'isolate',
    'cut-clients',
    'latency',
    'stall-holder',
    'flicker',
    'suspend',
    'delete-waiter-key',
    'cut-holder',
    'reset-holder',
    'hang-at-close',
  ],
  defaultTtlMs: 1_000,
  // etcd grants lease TTLs in whole seconds, at least 1.5 election timeouts (1 s here) rounded up: 2 s.
  sessionMs: (ttlMs) => Math.max(2, Math.ceil(ttlMs / 1_000)) * 1_000,
  nativeElection: true,
  async connect({ endpoints, namespace }) {
    const client = new EtcdClient({ hosts: endpoints, prefix: namespace });
    return {
      locks: client,
      elections: client,
      guardedWrite: (lease, key, value) => guardedPut(lease, `${namespace}/data/${key}`, value),
      close: () => client.close(),
    };
  },
});
