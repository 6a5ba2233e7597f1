import { RedlockClient } from '@fencekit/redlock';
import { deployCluster, preflightCluster } from './cluster-deployment.js';
import type { BackendFactory } from './types.js';

/** Redlock over five independent Redis masters. No safe fence, so fencing does not apply. */
export const redlockBackend: BackendFactory = {
  name: 'redlock',
  description: 'Redlock on 5 independent Redis masters (@fencekit/redlock)',
  safeFences: false,
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
  defaultTtlMs: 1_000,
  nativeElection: false,
  preflight: (provider) => preflightCluster('redis-independent', provider),
  deploy: ({ provider, signal }) => deployCluster('redlock', 'redis-independent', 5, provider, signal),
  async connect({ endpoints, namespace }) {
    const locks = new RedlockClient({
      nodes: endpoints.map((e) => `redis://${e}`),
      keyPrefix: `${namespace}:`,
    });
    return { locks, close: () => locks.close() };
  },
};
