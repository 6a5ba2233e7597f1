import { RedisLockClient } from '@fencekit/redis';
import { deployCluster, preflightCluster } from './cluster-deployment.js';
import type { BackendFactory } from './types.js';

/** One Redis: `SET NX PX` + owner token, with a fence counter issued in the same script. */
export const redisBackend: BackendFactory = {
  name: 'redis',
  description: 'single Redis (@fencekit/redis)',
  safeFences: true,
  faults: ['pause-client', 'pause-server', 'kill', 'cut-clients', 'latency', 'clock-jump', 'clock-drift'],
  defaultTtlMs: 500,
  nativeElection: false,
  preflight: (provider) => preflightCluster('redis', provider),
  deploy: ({ provider, signal }) => deployCluster('redis', 'redis', 1, provider, signal),
  async connect({ endpoints, namespace }) {
    const locks = new RedisLockClient({ connection: `redis://${endpoints[0]}`, keyPrefix: `${namespace}:` });
    return { locks, close: () => locks.close() };
  },
};
