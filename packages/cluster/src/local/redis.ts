import { redisPing, redisTimeMs } from '../probes.js';
import type { LocalRecipe } from './recipe.js';

/**
 * Redis without persistence (no RDB, no AOF): a killed and restarted node comes back empty, which is the
 * restart fault Redlock's safety argument has to survive.
 */
export const redisRecipe: LocalRecipe = {
  server: 'redis',
  peerPortCount: 0,
  clockShim: true,
  readyTimeoutMs: 15_000,
  launch(node) {
    return {
      command: 'redis-server',
      args: [
        '--bind',
        node.listenHost,
        '--port',
        String(node.clientPort),
        '--dir',
        node.dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
        '--daemonize',
        'no',
        '--logfile',
        '',
      ],
    };
  },
  ready: (target, timeoutMs) => redisPing(target.host, target.port, timeoutMs),
  readClock: async (target) => ({ ms: await redisTimeMs(target.host, target.port), wall: true }),
};
