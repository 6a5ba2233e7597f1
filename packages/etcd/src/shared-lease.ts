import {
  isFencekitError,
  ManagedReadWriteLease,
  type ReadWriteLease,
  type ReadWriteMode,
  type SemaphoreLease,
} from '@fencekit/core';
import { type EtcdGrant, EtcdLease } from './lease.js';

/**
 * A semaphore grant: an `EtcdLease` on the grant's permit key (`<prefix>/semaphores/<name>/permits/…`),
 * `fence` its create revision. Lifetime, extend and release are the lock lease's, except that releasing
 * a grant that already lapsed resolves.
 */
export class EtcdSemaphoreLease extends EtcdLease implements SemaphoreLease<bigint> {
  constructor(
    grant: EtcdGrant,
    /** How many permits this grant holds. */
    readonly permits: number,
  ) {
    super(grant);
  }

  override release(): Promise<void> {
    return releaseShared(super.release());
  }
}

/**
 * Core's contract for shared grants: releasing one that already lapsed resolves (there is nothing to
 * give back). The lock lease reads "my key is gone and another key heads the queue" as
 * `NotLockHolderError`; among the holders of a semaphore or a read lock another key is no news.
 */
async function releaseShared(releasing: Promise<void>): Promise<void> {
  try {
    await releasing;
  } catch (error) {
    if (!isFencekitError(error, 'not-holder')) throw error;
  }
}

/** A read-write lock grant: an `EtcdLease` on its permit key, plus its mode; no upgrade, no downgrade. */
export class EtcdReadWriteLease extends EtcdLease implements ReadWriteLease<bigint> {
  constructor(
    grant: EtcdGrant,
    readonly mode: ReadWriteMode,
  ) {
    super(grant);
  }

  override release(): Promise<void> {
    return releaseShared(super.release());
  }

  // Core's refusals (they read only `resource` and `mode`), so every backend says the same thing.
  upgrade(): Promise<never> {
    return ManagedReadWriteLease.prototype.upgrade.call(this);
  }

  downgrade(): Promise<never> {
    return ManagedReadWriteLease.prototype.downgrade.call(this);
  }
}
