import { RedisSharedLockClient } from '@fencekit/redis';
import { patchMethod } from './internals.js';
import type { Mutant } from './mutant.js';

/**
 * A semaphore that grants one permit more than it has: every client of the process opens each
 * semaphore with `permits + 1` on the Redis engine, while its users (the harness's `semaphore`
 * workload) keep recording the count they asked for. All clients agree on the wrong count, so the
 * engine's "another count while in use" refusal never fires: only the checkers can tell.
 */
export const redisSemaphoreExtraPermit: Mutant = {
  name: 'redis-semaphore-extra-permit',
  backend: 'redis',
  breaks:
    'a semaphore of N permits has at most N permits granted at once: here the engine is opened with N + 1, so one holder more is granted than the semaphore has permits',
  // Contention alone exposes it: half as many permits as clients, every client asking again at once.
  exposure: { workload: 'semaphore', faults: [], fencing: true, clients: 4 },
  checkers: ['semaphore', 'semaphore-lease'],
  async install() {
    patchMethod(
      RedisSharedLockClient.prototype,
      'semaphore',
      (original) =>
        function (this: RedisSharedLockClient, name: string, options: { permits: number }) {
          return original.call(this, name, { ...options, permits: options.permits + 1 });
        },
      this.name,
    );
    return {};
  },
};
