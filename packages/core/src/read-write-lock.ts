import type { AcquireOptions, Fence, TryAcquireOptions } from './contract.js';
import type { ReadWriteLease, ReadWriteLock, ReadWriteMode } from './contract-shared.js';
import { MAX_PERMITS } from './validate.js';

/**
 * A read-write lock's weight on a semaphore of `MAX_PERMITS` units: a reader takes 1 (readers share),
 * a writer all of them (alone). For backends that build the lock on their weighted semaphore.
 */
export function readWriteWeight(mode: ReadWriteMode): number {
  return mode === 'read' ? 1 : MAX_PERMITS;
}

/**
 * The `ReadWriteLock` handle on `name` of a backend that acquires both modes through one `acquire`
 * and one `tryAcquire` taking the mode.
 */
export function readWriteLockOf<F extends Fence | undefined>(
  name: string,
  acquire: (mode: ReadWriteMode, options: AcquireOptions) => Promise<ReadWriteLease<F>>,
  tryAcquire: (mode: ReadWriteMode, options: TryAcquireOptions) => Promise<ReadWriteLease<F> | null>,
): ReadWriteLock<F> {
  return {
    name,
    read: (options) => acquire('read', options),
    write: (options) => acquire('write', options),
    tryRead: (options) => tryAcquire('read', options),
    tryWrite: (options) => tryAcquire('write', options),
  };
}
