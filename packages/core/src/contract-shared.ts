/**
 * The contracts of the shared-access primitives: a counting semaphore ("at most N at a time") and a
 * read-write lock ("many readers or one writer"). Same promises as the mutex (`contract.ts`): every
 * grant is a lease with validity, an abort signal, extend, idempotent release and `await using`;
 * every wait is bounded by `waitMs` and cancellable by `signal`; waiters are served in arrival order.
 */
import type { AcquireOptions, Fence, Lease, LockCapabilities, TryAcquireOptions } from './contract.js';

// ---- counting semaphore ----------------------------------------------------------------------

export interface SemaphoreOptions {
  /**
   * How many permits the semaphore has: a whole number from 1 to `MAX_PERMITS`. Fixed per name: every
   * client of one name must pass the same number. While a semaphore has holders or waiters, a client
   * that names it with another count is refused with `InvalidArgumentError` (nothing is granted).
   */
  permits: number;
}

export interface SemaphoreAcquireOptions extends AcquireOptions {
  /** How many permits this grant takes, 1 (default) up to the semaphore's `permits`. */
  permits?: number;
}

export interface SemaphoreTryAcquireOptions extends TryAcquireOptions {
  /** How many permits this grant takes, 1 (default) up to the semaphore's `permits`. */
  permits?: number;
}

/**
 * One grant of `permits` permits. `resource` is the semaphore's name.
 *
 * What its `fence` promises: unique per grant and strictly increasing in grant order across all
 * holders of the semaphore (a grant made after another one carries a higher fence). What it cannot
 * promise: since up to N holders are valid at once, "refuse anything below the highest fence seen"
 * would refuse live holders, so a resource cannot use the fence alone to keep out a holder whose
 * permit has lapsed. Use it to order or tag work (per-slot records, idempotence keys), or take a
 * mutex / the write side of a read-write lock for writes that must refuse stale holders.
 */
export interface SemaphoreLease<F extends Fence | undefined = Fence> extends Lease<F> {
  /** How many permits this grant holds. */
  readonly permits: number;
}

export interface Semaphore<F extends Fence | undefined = Fence> {
  readonly name: string;
  readonly permits: number;
  /**
   * Waits (in arrival order, without polling where the backend allows) until `options.permits`
   * permits are free and nobody queued earlier still waits, up to `waitMs`. Strict FIFO: a request
   * for several permits at the head of the queue is never passed by a smaller request behind it.
   */
  acquire(options: SemaphoreAcquireOptions): Promise<SemaphoreLease<F>>;
  /** One attempt: the lease, or `null` when the permits are not free or others are queued. */
  tryAcquire(options: SemaphoreTryAcquireOptions): Promise<SemaphoreLease<F> | null>;
}

export interface SemaphoreClient<F extends Fence | undefined = Fence> {
  readonly backend: string;
  readonly capabilities: LockCapabilities;
  /** A handle on the semaphore `name`; cheap, nothing is sent until an acquire. */
  semaphore(name: string, options: SemaphoreOptions): Semaphore<F>;
  /** Releases every lease still held, stops waiters with `ClientClosedError`, leaves nothing behind. */
  close(): Promise<void>;
}

// ---- read-write lock -------------------------------------------------------------------------

export type ReadWriteMode = 'read' | 'write';

/**
 * A read or write grant. `resource` is the lock's name.
 *
 * Fences come from one counter per lock, raised by every grant of either mode: a write lease's fence
 * is strictly greater than every fence granted before it (so write fences strictly increase across
 * writers, and a resource refuses stale writers by "fence above the highest seen"), and a read
 * lease's fence is greater than the fence of every writer granted before it. A resource that stores
 * the fence of the last write can therefore refuse a read whose fence is below it: that reader's lease
 * lapsed and a later writer has already superseded what it would see.
 *
 * Upgrade (read → write) and downgrade (write → read) are not supported: both reject with
 * `UnsupportedOperationError` and leave the lease as it was. Release and acquire the other mode instead
 * (an upgrade in place deadlocks as soon as two readers try it).
 */
export interface ReadWriteLease<F extends Fence | undefined = Fence> extends Lease<F> {
  readonly mode: ReadWriteMode;
  /** Always rejects with `UnsupportedOperationError`; the lease is unchanged. */
  upgrade(): Promise<never>;
  /** Always rejects with `UnsupportedOperationError`; the lease is unchanged. */
  downgrade(): Promise<never>;
}

export interface ReadWriteLock<F extends Fence | undefined = Fence> {
  readonly name: string;
  /**
   * A shared lease: granted alongside other readers, never alongside a writer. Writers are not starved:
   * a writer waiting in the queue blocks every reader that arrives after it (strict arrival order).
   */
  read(options: AcquireOptions): Promise<ReadWriteLease<F>>;
  /** An exclusive lease: no other reader or writer holds the lock while it is valid. */
  write(options: AcquireOptions): Promise<ReadWriteLease<F>>;
  /** One attempt at a read lease: `null` when a writer holds the lock or anybody is queued. */
  tryRead(options: TryAcquireOptions): Promise<ReadWriteLease<F> | null>;
  /** One attempt at a write lease: `null` when anybody holds the lock or is queued. */
  tryWrite(options: TryAcquireOptions): Promise<ReadWriteLease<F> | null>;
}

export interface ReadWriteLockClient<F extends Fence | undefined = Fence> {
  readonly backend: string;
  readonly capabilities: LockCapabilities;
  /** A handle on the read-write lock `name`; cheap, nothing is sent until an acquire. */
  readWriteLock(name: string): ReadWriteLock<F>;
  close(): Promise<void>;
}
