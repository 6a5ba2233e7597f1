import { RedisLockClient } from '@fencekit/redis';
import type { BackendFactory } from './types.js';

/** Server start-up code, loaded only by the coordinator: client processes never touch it. */
const servers = () => import('./cluster-deployment.js');

/** One Redis: `SET NX PX` + owner token, with a fence counter issued in the same script. */
export const redisBackend: BackendFactory = {
  name: 'redis',
  description: 'single Redis (@fencekit/redis)',
  safeFences: true,
  faults: ['pause-client', 'pause-server', 'kill', 'cut-clients', 'latency', 'clock-jump', 'clock-drift'],
  defaultTtlMs: 500,
  nativeElection: false,
  async preflight(provider) {
    await (await servers()).preflightCluster('redis', provider);
  },
  async deploy({ provider, signal }) {
    return (await servers()).deployCluster('redis', 'redis', 1, provider, signal);
  },
  async connect({ endpoints, namespace }) {
    const locks = new RedisLockClient({ connection: `redis://${endpoints[0]}`, keyPrefix: `${namespace}:` });
    return { locks, close: () => locks.close() };
  },
};
