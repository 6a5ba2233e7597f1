import { RedisLockClient } from '@fencekit/redis';
import { ioredisSendClock } from '../client/send-clock.js';
import { clusterBackend } from './cluster-backend.js';

/** One Redis: `SET NX PX` + owner token, with a fence counter issued in the same script. */
export const redisBackend = clusterBackend({
  name: 'redis',
  description: 'single Redis (@fencekit/redis)',
  topology: 'redis',
  nodes: 1,
  safeFences: true,
  faults: [
    'pause-client',
    'pause-server',
    'kill',
    'cut-clients',
    'latency',
    'clock-jump',
    'clock-drift',
    'stall-holder',
    'stall-acquire',
    'flicker',
    'suspend',
    'hang-at-close',
  ],
  defaultTtlMs: 500,
  nativeElection: false,
  async connect({ endpoints, namespace }) {
    const locks = new RedisLockClient({ connection: `redis://${endpoints[0]}`, keyPrefix: `${namespace}:` });
    return { locks, sends: ioredisSendClock('@fencekit/redis'), close: () => locks.close() };
  },
});
