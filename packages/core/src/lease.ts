import { monotonicNow, validUntilFrom } from './clock.js';
import type { ExtendOptions, Fence, Lease } from './contract.js';
import { isFencekitError, LockLostError } from './errors.js';
import { assertPositiveMs } from './validate.js';

/** What a backend does for one granted lease; `ManagedLease` does the bookkeeping around it. */
export interface LeaseOperations {
  /**
   * Re-arms the grant for `ttlMs` on the backend, checking the owner. Throws `LockLostError` when the
   * backend no longer holds this grant.
   */
  extend(ttlMs: number, options: ExtendOptions): Promise<void>;
  /**
   * Deletes the grant, checking the owner. Throws `NotLockHolderError` when someone else holds the
   * lock now; resolves when the grant was already gone (expired, nobody else holds it).
   */
  release(): Promise<void>;
}

export interface GrantedLease<F extends Fence | undefined> {
  resource: string;
  owner: string;
  fence: F;
  /** `monotonicNow()` when the acquire request that produced this grant was sent. */
  sentAt: number;
  ttlMs: number;
  /** Clock drift to subtract from a ttl (Redlock's drift factor); 0 when omitted. */
  driftMs?: (ttlMs: number) => number;
  operations: LeaseOperations;
  /** Called once when the lease ends for any reason, so the client can forget it. */
  onEnd?: () => void;
}

/**
 * The shared lease bookkeeping every adapter hands out: validity on the monotonic clock, a signal
 * aborted at expiry or loss, idempotent release, and extension that refuses once the lease is gone.
 * Adapters supply only the backend operations.
 */
export class ManagedLease<F extends Fence | undefined> implements Lease<F> {
  readonly resource: string;
  readonly owner: string;
  readonly fence: F;
  #validUntil: number;
  readonly #controller = new AbortController();
  readonly #operations: LeaseOperations;
  readonly #driftMs: (ttlMs: number) => number;
  readonly #onEnd: (() => void) | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  #released = false;
  #ended = false;

  constructor(grant: GrantedLease<F>) {
    this.resource = grant.resource;
    this.owner = grant.owner;
    this.fence = grant.fence;
    this.#operations = grant.operations;
    this.#driftMs = grant.driftMs ?? (() => 0);
    this.#onEnd = grant.onEnd;
    this.#validUntil = validUntilFrom(grant.sentAt, grant.ttlMs, this.#driftMs(grant.ttlMs));
    this.#armExpiry();
  }

  get validUntil(): number {
    return this.#validUntil;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get held(): boolean {
    return !this.#controller.signal.aborted && monotonicNow() < this.#validUntil;
  }

  /** Milliseconds of validity left (0 when gone). */
  remainingMs(): number {
    return this.held ? this.#validUntil - monotonicNow() : 0;
  }

  async extend(ttlMs: number, options: ExtendOptions = {}): Promise<void> {
    assertPositiveMs('ttlMs', ttlMs);
    if (!this.held) throw this.#lossReason('extend after the lease ended');
    const sentAt = monotonicNow();
    try {
      await this.#operations.extend(ttlMs, options);
    } catch (error) {
      if (error instanceof LockLostError) this.markLost(error.reason, error);
      else if (isFencekitError(error, 'lost')) this.markLost(error.message, error);
      throw error;
    }
    const validUntil = validUntilFrom(sentAt, ttlMs, this.#driftMs(ttlMs));
    if (this.#controller.signal.aborted) throw this.#lossReason('lost while extending');
    if (validUntil <= monotonicNow()) {
      const lost = new LockLostError(this.resource, 'extension answered after its validity had passed');
      this.markLost(lost.reason);
      throw lost;
    }
    this.#validUntil = validUntil;
    this.#armExpiry();
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#clearExpiry();
    try {
      await this.#operations.release();
    } catch (error) {
      if (isFencekitError(error, 'not-holder')) {
        this.#end(new LockLostError(this.resource, 'another holder had taken the lock', { cause: error }));
      } else {
        this.#end(new LockLostError(this.resource, 'release failed', { cause: error }));
      }
      throw error;
    }
    this.#end(new LockLostError(this.resource, 'released by its holder'));
  }

  /** Marks the lease lost (session expired, connection suspended, keep-alive failed…). */
  markLost(reason: string, cause?: unknown): void {
    this.#end(new LockLostError(this.resource, reason, cause === undefined ? undefined : { cause }));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch (error) {
      // A lease that was already lost has nothing to give back; its signal already said so.
      if (!isFencekitError(error, 'not-holder') && !isFencekitError(error, 'lost')) throw error;
    }
  }

  #lossReason(context: string): LockLostError {
    const reason = this.#controller.signal.reason;
    if (reason instanceof LockLostError) return reason;
    return new LockLostError(this.resource, context);
  }

  #armExpiry(): void {
    this.#clearExpiry();
    const delay = Math.max(0, this.#validUntil - monotonicNow());
    this.#expiryTimer = setTimeout(() => this.#end(new LockLostError(this.resource, 'ttl expired')), delay);
    // An expiry watch must not keep a process alive that has nothing else to do.
    this.#expiryTimer.unref();
  }

  #clearExpiry(): void {
    if (this.#expiryTimer !== undefined) clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
  }

  #end(reason: LockLostError): void {
    this.#clearExpiry();
    if (this.#ended) return;
    this.#ended = true;
    this.#controller.abort(reason);
    this.#onEnd?.();
  }
}

/**
 * Hands `lease` out only if it is still valid. A grant whose validity was used up on the way back
 * (a slow answer, a long queue, a tiny TTL) is given back (best effort) and reported as
 * `LockLostError`, so callers never receive a lease that is already over.
 */
export async function freshLease<L extends ManagedLease<Fence | undefined>>(lease: L): Promise<L> {
  if (lease.held) return lease;
  try {
    await lease.release();
  } catch {
    // The grant lapses on its own; the caller only needs to know it was never usable.
  }
  throw new LockLostError(lease.resource, 'the grant arrived after its validity had passed');
}
