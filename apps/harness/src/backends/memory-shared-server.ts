import {
  type Fence,
  type Lease,
  MemorySharedLockClient,
  type ReadWriteLease,
  type SemaphoreLease,
} from '@fencekit/core';

/**
 * The in-memory backend's semaphores and read-write locks, served by its lock-server process beside
 * the mutex (memory-server.ts): core's `MemorySharedLockClient` is one-process by design, so client
 * processes ask this one. Requests are validated by the core client itself (`InvalidArgumentError`
 * travels back as the error's code); ops: `shared-acquire`, `shared-extend`, `shared-release`.
 */
export function sharedLockHandler(): {
  handle(request: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
} {
  const client = new MemorySharedLockClient({ name: 'memory shared-lock server' });
  // Kept after expiry too, as the mutex's: a late release or extend must find what it names.
  const leases = new Map<string, Lease<Fence>>();
  const track = (lease: Lease<Fence> | null): { owner: string; fence: string } | null => {
    if (lease === null) return null;
    leases.set(lease.owner, lease);
    return { owner: lease.owner, fence: lease.fence.toString() };
  };
  const acquire = async (request: Record<string, unknown>): Promise<Lease<Fence> | null> => {
    const name = request.name as string;
    const ttlMs = request.ttlMs as number;
    const waitMs = request.waitMs as number;
    const once = request.once === true;
    if (request.kind === 'semaphore') {
      const semaphore = client.semaphore(name, { permits: request.limit as number });
      const permits = request.permits as number;
      const lease: SemaphoreLease<bigint> | null = once
        ? await semaphore.tryAcquire({ ttlMs, permits })
        : await semaphore.acquire({ ttlMs, waitMs, permits });
      return lease;
    }
    const lock = client.readWriteLock(name);
    const write = request.mode === 'write';
    const lease: ReadWriteLease<bigint> | null = once
      ? await (write ? lock.tryWrite({ ttlMs }) : lock.tryRead({ ttlMs }))
      : await (write ? lock.write({ ttlMs, waitMs }) : lock.read({ ttlMs, waitMs }));
    return lease;
  };
  return {
    async handle(request) {
      switch (request.op) {
        case 'shared-acquire':
          return track(await acquire(request));
        case 'shared-extend': {
          const lease = leases.get(request.owner as string);
          if (!lease) throw Object.assign(new Error(`lease ${request.owner} is gone`), { code: 'lost' });
          await lease.extend(request.ttlMs as number);
          return null;
        }
        case 'shared-release': {
          const lease = leases.get(request.owner as string);
          leases.delete(request.owner as string);
          if (lease) await lease.release();
          return null;
        }
        default:
          throw new Error(`unknown shared-lock op ${JSON.stringify(request.op)}`);
      }
    },
    close: () => client.close(),
  };
}
