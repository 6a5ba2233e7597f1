import type { Fence } from './contract.js';
import type { ReadWriteLease, ReadWriteMode, SemaphoreLease } from './contract-shared.js';
import { UnsupportedOperationError } from './errors.js';
import { type GrantedLease, ManagedLease } from './lease.js';

/** A semaphore grant: `ManagedLease`'s bookkeeping plus how many permits it holds. */
export class ManagedSemaphoreLease<F extends Fence | undefined>
  extends ManagedLease<F>
  implements SemaphoreLease<F>
{
  readonly permits: number;

  constructor(grant: GrantedLease<F>, permits: number) {
    super(grant);
    this.permits = permits;
  }
}

/** A read-write lock grant: `ManagedLease`'s bookkeeping plus its mode; no upgrade, no downgrade. */
export class ManagedReadWriteLease<F extends Fence | undefined>
  extends ManagedLease<F>
  implements ReadWriteLease<F>
{
  readonly mode: ReadWriteMode;

  constructor(grant: GrantedLease<F>, mode: ReadWriteMode) {
    super(grant);
    this.mode = mode;
  }

  upgrade(): Promise<never> {
    return Promise.reject(
      new UnsupportedOperationError(
        this.resource,
        `upgrading a ${this.mode} lease`,
        'release it and acquire a write lease (two readers upgrading in place would wait on each other forever)',
      ),
    );
  }

  downgrade(): Promise<never> {
    return Promise.reject(
      new UnsupportedOperationError(
        this.resource,
        `downgrading a ${this.mode} lease`,
        'release it and acquire a read lease (another writer may be granted in between)',
      ),
    );
  }
}
