import { RedlockClient } from '@fencekit/redlock';
import { ioredisSendClock } from '../client/send-clock.js';
import { FAULT_NAMES } from '../nemesis/faults.js';
import { clusterBackend } from './cluster-backend.js';

/** Redlock over five independent Redis masters. No safe fence, so fencing does not apply. */
export const redlockBackend = clusterBackend({
  name: 'redlock',
  description: 'Redlock on 5 independent Redis masters (@fencekit/redlock)',
  topology: 'redis-independent',
  nodes: 5,
  safeFences: false,
  faults: FAULT_NAMES,
  defaultTtlMs: 1_000,
  nativeElection: false,
  async connect({ endpoints, namespace, ttlMs }) {
    const locks = new RedlockClient({
      nodes: endpoints.map((endpoint) => {
        const [host, port] = endpoint.split(':') as [string, string];
        // Back within 50 ms of a heal (ioredis's default backoff reaches 2 s): a node that is reachable
        // again must count in the next quorum, or a scenario waits on reconnects instead of on Redlock.
        return { host, port: Number(port), retryStrategy: (times: number) => Math.min(times * 10, 50) };
      }),
      keyPrefix: `${namespace}:`,
      // Queue entries left on nodes a waiter can no longer reach (cut, clock-jumped) expire within a TTL.
      waiterTtlMs: Math.max(500, ttlMs),
      // A fifth of the TTL per node (the default is a twentieth): two busy cores running servers, clients
      // and checkers answer loopback requests in tens of milliseconds, and timeouts alone must not decide.
      nodeTimeoutMs: Math.max(50, Math.round(ttlMs / 5)),
    });
    return { locks, sends: ioredisSendClock('@fencekit/redlock'), close: () => locks.close() };
  },
});
