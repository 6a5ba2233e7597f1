import {
  type ExtendOptions,
  InvalidArgumentError,
  isFencekitError,
  LockLostError,
  ManagedLease,
  monotonicNow,
  NotLockHolderError,
} from '@fencekit/core';
import type { Etcd3 } from 'etcd3';
import { isRefusal, toBackendError } from './errors.js';
import { leave, locate, type Ticket } from './queue.js';
import type { Session } from './session.js';
import type { QueueContext } from './wait.js';
import { withdrawInBackground } from './withdrawal.js';

/** Marks an `extend` issued by the session's own keep-alive, which must not cost another request. */
const SESSION_RENEWAL = Symbol('fencekit.etcd.sessionRenewal');

/** Subtracted from every validity, so a lease always ends a little before the session it lives on. */
const DRIFT_MS = 1;

/** What `guardedPut` and custom transactions need to know about a grant. */
export interface Holding {
  readonly etcd: Etcd3;
  /** Deadline of each request (ms), the client's `callTimeoutMs`. */
  readonly callTimeoutMs: number;
  readonly key: string;
  readonly queue: string;
  readonly revision: bigint;
  readonly leaseId: string;
}

const holdings = new WeakMap<object, Holding>();

/** Lets a leadership carry the holding of the lease behind it. */
export function shareHolding(from: object, to: object): void {
  const holding = holdings.get(from);
  if (holding) holdings.set(to, holding);
}

/** The etcd side of a lease or leadership handed out by this package, or undefined for others. */
export function holdingOf(lease: object): Holding | undefined {
  return holdings.get(lease);
}

export interface EtcdGrant {
  /** The client's etcd, request deadline, closing signal and `track` (for the background withdrawal). */
  context: QueueContext;
  session: Session;
  ticket: Ticket;
  resource: string;
  owner: string;
  /** Called once when the lease ends (released, lost, expired). */
  onEnd: () => void;
}

/**
 * A granted etcd lock. `fence` is the create revision of the lock key; the lease stays valid as long
 * as its session does (`validUntil` moves with every keep-alive) and `signal` aborts when the session
 * is lost or its TTL runs out on the local clock. A holder's `extend` shorter than the session TTL
 * ends it at that window instead.
 *
 * However it ends, its key does not outlive it on a live session: released (confirmed), or else
 * withdrawn in the background (see `withdrawInBackground`) until etcd confirms it or the session ends.
 */
export class EtcdLease extends ManagedLease<bigint> {
  /** The lock key (`<prefix>/locks/<resource>/<lease hex>`): compare its create revision in your own Txns. */
  readonly key: string;
  /** The etcd lease the key is attached to (decimal id). */
  readonly leaseId: string;
  /** The TTL etcd granted that lease (ms): how long after its holder dies the lock frees itself. */
  readonly grantedTtlMs: number;
  readonly #session: Session;
  readonly #ticket: Ticket;
  readonly #context: QueueContext;
  /** Armed only while the lease's validity ends before its session's (see `#watchOwnExpiry`). */
  #ownExpiry: NodeJS.Timeout | undefined;
  /** A holder's extend set a window shorter than the session's: renewals no longer move validity. */
  #shortened = false;
  /** Holder's extends in flight: renewals leave validity to their answer meanwhile. */
  #extending = 0;
  /** etcd confirmed this grant's key (this create revision) is gone. */
  #keyGone = false;
  /** A release request went unanswered: it may have deleted the key, so a retry finding it gone succeeded. */
  #releaseUnanswered = false;

  constructor(grant: EtcdGrant) {
    const { context, session, ticket, resource } = grant;
    let detach = () => {};
    super({
      resource,
      owner: grant.owner,
      fence: ticket.revision,
      // Valid exactly as long as the session: the key dies with its lease, not before.
      sentAt: session.validUntil - session.ttlMs,
      ttlMs: session.ttlMs,
      driftMs: () => DRIFT_MS,
      // No timer per lease while the lease expires with its session: the session's timer ends it then
      // (onSessionLost below), and `held` and `signal` notice expiry on the clock. A holder's extend
      // shorter than the session TTL breaks that equality; `extend` below arms a timer for that case.
      lazyExpiry: true,
      operations: {
        extend: async (ttlMs: number, options: ExtendOptions) => {
          if ((options as Record<symbol, unknown>)[SESSION_RENEWAL]) return;
          if (ttlMs > session.ttlMs) {
            throw new InvalidArgumentError('ttlMs', ttlMs, `at most the session TTL of ${session.ttlMs} ms`);
          }
          await confirm(context, session, ticket, resource);
        },
        release: async () => {
          // The client closed: revoking its sessions deleted this key with all the others.
          if (context.closing.aborted && !session.alive) return;
          const outcome = await this.#leave(true);
          // Gone, and someone else heads the queue: the lease had lapsed and was taken over, unless
          // an earlier try of this release may have been the one that deleted the key.
          if (outcome.head !== null && outcome.head !== ticket.key && !this.#releaseUnanswered) {
            throw new NotLockHolderError(resource, grant.owner);
          }
        },
      },
      onEnd: () => {
        detach();
        grant.onEnd();
        // Checked in first: a per-grant session is revoked there (its keys go with it), so only a
        // shared session that has not ended can keep the key, and only a withdrawal removes it. Not
        // ended, rather than alive by the clock: a lease can end past its session's validity before
        // the session's expiry timer has run (a stalled event loop), and a keep-alive answered then
        // renews the session and its keys; the withdrawal stops by itself if the session ends instead.
        if (!this.#keyGone && !session.signal.aborted && !context.closing.aborted) {
          void context.track(
            withdrawInBackground(() => this.#leave(false).then(() => undefined), session, context.closing),
          );
        }
      },
    });
    this.key = ticket.key;
    this.leaseId = session.id;
    this.grantedTtlMs = session.grantedTtlMs;
    this.#session = session;
    this.#ticket = ticket;
    this.#context = context;
    holdings.set(this, {
      etcd: context.etcd,
      callTimeoutMs: context.callTimeoutMs,
      key: ticket.key,
      queue: ticket.queue,
      revision: ticket.revision,
      leaseId: session.id,
    });

    const stopRenewals = session.onRenew(() => {
      if (this.#shortened || this.#extending > 0) return;
      // Whole milliseconds, as every TTL is (rounded down: never more validity than the session's).
      const remaining = Math.floor(session.validUntil - monotonicNow());
      if (remaining > 0) {
        this.extend(remaining, { [SESSION_RENEWAL]: true } as ExtendOptions).catch(() => {});
      }
    });
    const onSessionLost = (reason: unknown) => {
      this.markLost(reason instanceof LockLostError ? reason.reason : 'etcd session lost', reason);
    };
    const stopLoss = session.onLost(onSessionLost);
    detach = () => {
      stopRenewals();
      stopLoss();
      clearTimeout(this.#ownExpiry);
      this.#ownExpiry = undefined;
    };
    if (session.signal.aborted) onSessionLost(session.signal.reason);
  }

  /**
   * A holder's extend sets the lease's window: for the session TTL, the lease follows its session
   * again; for less, it ends then, and later keep-alives do not move it (a renewal racing the answer
   * would otherwise undo the shorter window at random).
   */
  override async extend(ttlMs: number, options: ExtendOptions = {}): Promise<void> {
    if ((options as Record<symbol, unknown>)[SESSION_RENEWAL]) {
      await super.extend(ttlMs, options);
      return;
    }
    this.#extending += 1;
    try {
      await super.extend(ttlMs, options);
      this.#shortened = ttlMs < this.#session.ttlMs;
    } finally {
      this.#extending -= 1;
    }
    this.#watchOwnExpiry();
  }

  /**
   * One guarded delete of this grant's key (bounded by `callTimeoutMs`); resolves with who heads the
   * queue when the key was already gone. `byHolder`: a release the holder asked for, whose unanswered
   * try may have deleted the key.
   */
  async #leave(byHolder: boolean): Promise<{ head: string | null }> {
    let outcome: Awaited<ReturnType<typeof leave>>;
    try {
      outcome = await leave(this.#context, this.#ticket);
    } catch (error) {
      if (byHolder && !isRefusal(error)) this.#releaseUnanswered = true;
      throw toBackendError('release', error);
    }
    this.#keyGone = true;
    return outcome.deleted ? { head: null } : { head: outcome.head };
  }

  /**
   * A holder may extend for less than the session TTL (`extend` refuses only more). The lease then
   * expires before its session, and waiting for the session's timer would end it late: `onEnd` runs
   * then, and that revokes the grant's own etcd lease (`keepAlive: false`) or withdraws its key from
   * the shared session, which is what frees the lock for the next waiter. So while the two differ the
   * lease keeps a timer of its own; an extend for the full session TTL lines them up again (renewals
   * then carry the lease with its session) and drops it.
   */
  #watchOwnExpiry(): void {
    clearTimeout(this.#ownExpiry);
    this.#ownExpiry = undefined;
    // An ended lease needs no watch; within a millisecond of the drift, the session's timer ends it on time.
    if (!this.held || this.validUntil + DRIFT_MS + 1 >= this.#session.validUntil) return;
    const fire = () => {
      this.#ownExpiry = undefined;
      // Reading `held` ends the lease once its validity has passed; a timer firing early re-arms.
      if (this.held) this.#watchOwnExpiry();
    };
    this.#ownExpiry = setTimeout(fire, Math.max(0, this.validUntil - monotonicNow()));
    // Like the session's timers: an expiry watch must not keep a process alive.
    this.#ownExpiry.unref();
  }
}

/** A user-requested extend: one keep-alive round trip, plus proof that the lock key still exists. */
async function confirm(
  context: QueueContext,
  session: Session,
  ticket: Ticket,
  resource: string,
): Promise<void> {
  try {
    const [, position] = await Promise.all([session.keepAliveOnce(), locate(context, ticket)]);
    if (position.kind === 'gone') throw new LockLostError(resource, 'the lock key no longer exists');
  } catch (error) {
    if (error instanceof LockLostError && error.resource === 'session') {
      throw new LockLostError(resource, error.reason, { cause: error });
    }
    if (isFencekitError(error)) throw error;
    throw toBackendError('extend', error);
  }
}
