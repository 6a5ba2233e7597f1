import { LEASE_SLOT } from './client-lifecycle.js';
import { monotonicNow, validUntilFrom } from './clock.js';
import type { ExtendOptions, Fence, Lease } from './contract.js';
import { isFencekitError, LockLostError } from './errors.js';
import { assertTtlMs } from './validate.js';

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

/**
 * An outer bound on a lease's validity that the backend moves while the lease lives (ZooKeeper: until
 * when its session is surely still alive on the ensemble, which every answered request pushes on).
 */
export interface ValidityCap {
  /**
   * The `monotonicNow()` instant past which the backend can no longer vouch for the grant. Read at the
   * moment `held`, `validUntil`, `remainingMs()` or `extend` looks at validity, so a process that
   * stalled past it sees the lease over on its first read, before any timer or socket event has run.
   */
  until(): number;
  /** Why the lease ended when the cap, not the TTL, ran out. */
  readonly reason: string;
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
  /**
   * Called once, with the lease, when it ends for any reason, so the client can forget it (one
   * handler can then serve every lease: no closure per grant). Method syntax on purpose: its
   * parameter is then checked bivariantly, so `ManagedLease<bigint>` still passes where
   * `ManagedLease<bigint | undefined>` is expected (`freshLease`).
   */
  onEnd?(lease: ManagedLease<F>): void;
  /**
   * When true, expiry is noticed lazily (by `held`, `extend`, `release`, or a timer armed only once
   * `signal` is read), which saves a timer per lease on fast backends. Leave false when `onEnd` must
   * run at the moment of expiry (ZooKeeper gives its node up for the next waiter then).
   */
  lazyExpiry?: boolean;
  /**
   * Bounds validity from outside the TTL: `validUntil` is the earlier of the two. Applied when read;
   * the expiry timer watches only the TTL, so the backend itself ends its leases (`markLost`) when the
   * cap passes unread. Frozen when the lease ends.
   */
  validityCap?: ValidityCap;
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
  readonly #operations: LeaseOperations;
  readonly #driftMs: (ttlMs: number) => number;
  // Typed without F, so the field does not make ManagedLease<bigint> unassignable to
  // ManagedLease<bigint | undefined>; it is only ever called with this lease.
  readonly #onEnd: ((lease: unknown) => void) | undefined;
  // The signal and the loss error are built only when somebody needs them, and with `lazyExpiry` the
  // expiry timer too: a short critical section that never reads `signal` pays for none of it (the
  // bulk of a lease's cost on a fast backend).
  #controller: AbortController | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  /** Why the lease ended (undefined while it has not), and what caused it. */
  #endText: string | undefined;
  #endCause: unknown;
  #endError: LockLostError | undefined;
  /** Set once a release is final: confirmed, or refused because someone else holds the lock. */
  #released = false;
  /** The release in flight, shared by concurrent callers. */
  #releasing: Promise<void> | undefined;
  readonly #lazyExpiry: boolean;
  /** Undefined once the lease has ended: its validity is frozen then. */
  #cap: ValidityCap | undefined;
  /** @internal Where the client's `ClientLifecycle` keeps this lease (declared here so every lease has one shape). */
  [LEASE_SLOT]: number | undefined = undefined;

  constructor(grant: GrantedLease<F>) {
    this.resource = grant.resource;
    this.owner = grant.owner;
    this.fence = grant.fence;
    this.#operations = grant.operations;
    this.#driftMs = grant.driftMs ?? noDrift;
    this.#onEnd = grant.onEnd as ((lease: unknown) => void) | undefined;
    this.#validUntil = validUntilFrom(grant.sentAt, grant.ttlMs, this.#driftMs(grant.ttlMs));
    this.#lazyExpiry = grant.lazyExpiry ?? false;
    this.#cap = grant.validityCap;
    if (!this.#lazyExpiry) this.#armExpiry();
  }

  get validUntil(): number {
    const cap = this.#cap;
    return cap === undefined ? this.#validUntil : Math.min(this.#validUntil, cap.until());
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      this.#noticeExpiry();
      if (this.#endText !== undefined) this.#controller.abort(this.#lossError());
      else if (this.#expiryTimer === undefined) this.#armExpiry();
    }
    return this.#controller.signal;
  }

  get held(): boolean {
    this.#noticeExpiry();
    return this.#endText === undefined;
  }

  /** Milliseconds of validity left (0 when gone). */
  remainingMs(): number {
    return this.held ? this.validUntil - monotonicNow() : 0;
  }

  async extend(ttlMs: number, options: ExtendOptions = {}): Promise<void> {
    assertTtlMs('ttlMs', ttlMs);
    if (!this.held) throw this.#lossError('extend after the lease ended');
    const sentAt = monotonicNow();
    try {
      await this.#operations.extend(ttlMs, options);
    } catch (error) {
      if (error instanceof LockLostError) this.markLost(error.reason, error);
      else if (isFencekitError(error, 'lost')) this.markLost(error.message, error);
      throw error;
    }
    const validUntil = validUntilFrom(sentAt, ttlMs, this.#driftMs(ttlMs));
    if (this.#endText !== undefined) throw this.#lossError('lost while extending');
    if (validUntil <= monotonicNow()) {
      this.#end('extension answered after its validity had passed');
      throw this.#lossError();
    }
    this.#validUntil = validUntil;
    // The cap may have run out while the extension was in flight.
    this.#noticeExpiry();
    if (this.#endText !== undefined) throw this.#lossError();
    if (this.#controller !== undefined || !this.#lazyExpiry) this.#armExpiry();
  }

  /**
   * Gives the grant back. Idempotent once it succeeded (or was refused with `NotLockHolderError`);
   * concurrent calls share one attempt. A release that failed otherwise (backend unreachable, no
   * answer) ends the lease all the same, but may be called again and then really sends again: the
   * grant may still be on the backend, and only a retry can free it before its TTL does.
   */
  release(): Promise<void> {
    if (this.#released) return Promise.resolve();
    this.#releasing ??= this.#releaseOnce();
    return this.#releasing;
  }

  async #releaseOnce(): Promise<void> {
    this.#clearExpiry();
    try {
      await this.#operations.release();
    } catch (error) {
      const notHolder = isFencekitError(error, 'not-holder');
      if (notHolder) this.#released = true;
      this.#releasing = undefined;
      this.#end(notHolder ? 'another holder had taken the lock' : 'release failed', error);
      throw error;
    }
    this.#released = true;
    this.#releasing = undefined;
    this.#end('released by its holder');
  }

  /** Marks the lease lost (session expired, connection suspended, keep-alive failed…). */
  markLost(reason: string, cause?: unknown): void {
    this.#end(reason, cause);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch (error) {
      // A lease that was already lost has nothing to give back; its signal already said so.
      if (!isFencekitError(error, 'not-holder') && !isFencekitError(error, 'lost')) throw error;
    }
  }

  /** The error saying why the lease ended (built once), or a fresh one for `context` if it has not. */
  #lossError(context = 'the lease ended'): LockLostError {
    if (this.#endText === undefined) return new LockLostError(this.resource, context);
    if (this.#endError === undefined) {
      const cause = this.#endCause;
      this.#endError = new LockLostError(
        this.resource,
        this.#endText,
        cause === undefined ? undefined : { cause },
      );
    }
    return this.#endError;
  }

  #noticeExpiry(): void {
    if (this.#endText !== undefined) return;
    const now = monotonicNow();
    if (now >= this.#validUntil) this.#end('ttl expired');
    else if (this.#cap !== undefined && now >= this.#cap.until()) this.#end(this.#cap.reason);
  }

  #armExpiry(): void {
    this.#clearExpiry();
    const delay = Math.max(0, this.#validUntil - monotonicNow());
    this.#expiryTimer = setTimeout(() => this.#expire(), delay);
    // An expiry watch must not keep a process alive that has nothing else to do.
    this.#expiryTimer.unref();
  }

  #expire(): void {
    this.#expiryTimer = undefined;
    // Node timers may fire a little before performance.now() reaches the deadline: re-arm until it has.
    if (monotonicNow() < this.#validUntil) this.#armExpiry();
    else this.#end('ttl expired');
  }

  #clearExpiry(): void {
    if (this.#expiryTimer !== undefined) clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
  }

  #end(text: string, cause?: unknown): void {
    this.#clearExpiry();
    if (this.#endText !== undefined) return;
    this.#endText = text;
    this.#endCause = cause;
    const cap = this.#cap;
    if (cap !== undefined) {
      this.#cap = undefined;
      this.#validUntil = Math.min(this.#validUntil, cap.until());
    }
    this.#controller?.abort(this.#lossError());
    this.#onEnd?.(this);
  }
}

const noDrift = (): number => 0;

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
