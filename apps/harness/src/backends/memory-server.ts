/**
 * The in-memory backend's lock server: core's `MemoryLockClient` in a process of its own, so client
 * processes share one lock table and the nemesis can pause or kill it like any server. State lives
 * in memory only: a kill forgets every grant and restarts fences, as a non-durable lock server would.
 */
import { type Fence, type Lease, MemoryLockClient } from '@fencekit/core';
import { serveLines } from '../rpc/line-socket.js';
import { sharedLockHandler } from './memory-shared-server.js';

const socketPath = process.argv[2];
if (!socketPath) throw new Error('usage: memory-server <socket-path>');

const locks = new MemoryLockClient();
const leases = new Map<string, Lease<Fence>>();
// Semaphores and read-write locks (ops `shared-*`), on their own engine beside the mutex.
const shared = sharedLockHandler();

function track(lease: Lease<Fence> | null): { owner: string; fence: string } | null {
  if (lease === null) return null;
  // Kept after expiry too: a late release must still learn whether someone else holds the lock now.
  leases.set(lease.owner, lease);
  return { owner: lease.owner, fence: lease.fence.toString() };
}

const server = await serveLines(socketPath, async (request) => {
  if (typeof request.op === 'string' && request.op.startsWith('shared-')) return shared.handle(request);
  const resource = request.resource as string;
  const ttlMs = request.ttlMs as number;
  switch (request.op) {
    case 'acquire':
      return track(await locks.acquire(resource, { ttlMs, waitMs: request.waitMs as number }));
    case 'tryAcquire':
      return track(await locks.tryAcquire(resource, { ttlMs }));
    case 'extend': {
      const lease = leases.get(request.owner as string);
      if (!lease) throw Object.assign(new Error(`lease ${request.owner} is gone`), { code: 'lost' });
      await lease.extend(ttlMs);
      return null;
    }
    case 'release': {
      const lease = leases.get(request.owner as string);
      leases.delete(request.owner as string);
      if (lease) await lease.release();
      return null;
    }
    default:
      throw new Error(`unknown lock op ${JSON.stringify(request.op)}`);
  }
});

process.send?.({ kind: 'ready' });
const shutDown = () => {
  server.close();
  void Promise.allSettled([locks.close(), shared.close()]).finally(() => process.exit(0));
};
process.on('SIGTERM', shutDown);
// Its parent (the harness) gone without a SIGTERM (it died): the IPC channel closes, and so does this (#20).
process.on('disconnect', shutDown);
