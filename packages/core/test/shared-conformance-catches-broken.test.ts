import {
  createMemoryLockClient,
  createMemorySharedLockClient,
  MemoryLockServer,
  MemoryPermitServer,
  type ReadWriteLockClient,
  type SemaphoreClient,
} from '@fencekit/core';
import { runReadWriteLockCheck, runSemaphoreCheck } from '@fencekit/core/testing';
import { describe, expect, it } from 'vitest';

/** A semaphore that quietly grants one permit more than it was asked to have. */
function overGranting(): SemaphoreClient<bigint> {
  const inner = createMemorySharedLockClient({ server: new MemoryPermitServer() });
  return {
    backend: 'broken',
    capabilities: inner.capabilities,
    semaphore: (name, options) => {
      const real = inner.semaphore(name, { permits: options.permits + 1 });
      return { ...real, permits: options.permits };
    },
    close: () => inner.close(),
  };
}

/** A "read-write lock" that is a plain mutex: readers never share. */
function mutexOnly(): ReadWriteLockClient<bigint> {
  const server = new MemoryLockServer();
  const client = createMemoryLockClient({ server });
  const lease = async <T>(promise: Promise<T>, mode: 'read' | 'write') => {
    const granted = (await promise) as object | null;
    if (granted === null) return null;
    return Object.assign(granted, {
      mode,
      upgrade: () => Promise.reject(new Error('no')),
      downgrade: () => Promise.reject(new Error('no')),
    });
  };
  return {
    backend: 'broken',
    capabilities: client.capabilities,
    // biome-ignore lint/suspicious/noExplicitAny: a deliberately broken stand-in, shaped loosely.
    readWriteLock: (name): any => ({
      name,
      read: (o: { ttlMs: number }) => lease(client.acquire(name, o), 'read'),
      write: (o: { ttlMs: number }) => lease(client.acquire(name, o), 'write'),
      tryRead: (o: { ttlMs: number }) => lease(client.tryAcquire(name, o), 'read'),
      tryWrite: (o: { ttlMs: number }) => lease(client.tryAcquire(name, o), 'write'),
    }),
    close: () => client.close(),
  };
}

describe('the shared-lock conformance checks catch broken clients', () => {
  it('semaphore-at-most-n fails a semaphore that grants N + 1 permits', async () => {
    const client = overGranting();
    await expect(
      runSemaphoreCheck('semaphore-at-most-n', { createClient: async () => client }),
    ).rejects.toThrow(/permits held at once|beyond the limit/);
  });

  it('rwlock-exclusion fails a read-write lock whose readers never share', async () => {
    const client = mutexOnly();
    await expect(
      runReadWriteLockCheck('rwlock-exclusion', { createClient: async () => client }),
    ).rejects.toThrow(/second reader was refused/);
  });

  it('the reference client passes the same checks', async () => {
    const server = new MemoryPermitServer();
    const createClient = async () => createMemorySharedLockClient({ server });
    await runSemaphoreCheck('semaphore-at-most-n', { createClient });
    await runReadWriteLockCheck('rwlock-exclusion', { createClient });
  });
});
