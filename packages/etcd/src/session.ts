import type { EventEmitter } from 'node:events';
import {
  assertTtlMs,
  BackendUnavailableError,
  ClientClosedError,
  LockLostError,
  monotonicNow,
} from '@fencekit/core';
import { type Etcd3, EtcdLeaseInvalidError, type ILeaseKeepAliveResponse } from 'etcd3';
import { callOptions } from './connection.js';
import { isRefusal, messageOf } from './errors.js';
import { type KeepAliveStream, openKeepAlive } from './keep-alive-stream.js';
import { leaseIdHex } from './keys.js';

export interface SessionOptions {
  /**
   * How long the session stays valid without an answered keep-alive. etcd grants whole seconds and
   * enforces a minimum (1.5 × its election timeout); the server may so keep the lease a little longer,
   * but the session counts only `ttlMs` (never more than granted), so it never overstates its validity.
   */
  ttlMs: number;
  /** Deadline for the grant and revoke requests (ms). Default 5 000. */
  callTimeoutMs?: number;
  /**
   * Keep the lease alive in the background (default true). With false the lease lasts `ttlMs` unless
   * `keepAliveOnce()` renews it — a lock with a TTL rather than a session.
   */
  keepAlive?: boolean;
}

/** A `keepAliveOnce()` caller: settled by the first renewal of a keep-alive sent at or after `after`. */
interface RenewalWaiter {
  after: number;
  settle: (error?: Error) => void;
}

/**
 * A keep-alive unanswered this long (and at least one keep-alive interval, a third of the TTL) marks
 * its stream as stuck: it is reopened, on another member (keep-alive-stream.ts). Reopening at the first
 * unanswered interval leaves two thirds of the TTL for the new stream, so a session streaming through
 * a stopped member survives on the others (waiting for three unanswered used up the whole TTL, and the
 * session was lost while the cluster served). The floor keeps a short TTL from reopening on every
 * slow answer.
 */
const STUCK_AFTER_MS = 200;
const REOPEN_DELAY_MS = 100;

/**
 * Liveness as its own object, like etcd's Go `concurrency.Session`: one etcd lease, kept alive every
 * TTL/3 over a keep-alive stream. Locks and elections attach their keys to it.
 *
 * Validity is tracked on the local monotonic clock from when the last *answered* keep-alive was
 * *sent*: the server renewed the lease no earlier than that, so `validUntil` never overstates what
 * the server grants. `signal` aborts the moment the server says the lease is gone or `validUntil`
 * passes without a renewal — not later, whatever the connection is doing.
 */
export class Session {
  /** The etcd lease id (decimal, as etcd reports it). */
  readonly id: string;
  readonly idHex: string;
  /** Validity counted from each answered keep-alive: min(requested, granted) ms. */
  readonly ttlMs: number;
  /** The TTL etcd granted (ms): how long after the last keep-alive the server deletes the keys. */
  readonly grantedTtlMs: number;
  readonly #etcd: Etcd3;
  readonly #callTimeoutMs: number;
  #keepAlive: boolean;
  readonly #controller = new AbortController();
  readonly #renewListeners = new Set<() => void>();
  readonly #lostListeners = new Set<(reason: LockLostError) => void>();
  #validUntil: number;
  #expiryTimer: NodeJS.Timeout | undefined;
  #keepAliveTimer: NodeJS.Timeout | undefined;
  #reopenTimer: NodeJS.Timeout | undefined;
  #stream: KeepAliveStream | undefined;
  #opening: Promise<void> | undefined;
  /** The member the current stream runs through, and the one the next stream should avoid. */
  #streamMember: unknown;
  #avoidMember: unknown;
  /** Checks the oldest unanswered keep-alive once it has had its time (see #stuckAfterMs). */
  #stuckTimer: NodeJS.Timeout | undefined;
  /** Send times of keep-alives written on the current stream, answered in order. */
  #pending: number[] = [];
  #waiters: RenewalWaiter[] = [];
  /** Background keep-alive every third of the TTL. */
  readonly #intervalMs: number;
  /** When the last request that renews the lease (grant or keep-alive) was sent. */
  #lastSentAt: number;
  #closed = false;

  private constructor(
    etcd: Etcd3,
    id: string,
    ttlMs: number,
    grantedTtlMs: number,
    sentAt: number,
    callTimeoutMs: number,
    keepAlive: boolean,
  ) {
    this.#etcd = etcd;
    this.id = id;
    this.idHex = leaseIdHex(id);
    this.ttlMs = Math.min(ttlMs, grantedTtlMs);
    this.grantedTtlMs = grantedTtlMs;
    ttlMs = this.ttlMs;
    this.#callTimeoutMs = callTimeoutMs;
    this.#keepAlive = keepAlive;
    this.#validUntil = sentAt + ttlMs;
    this.#lastSentAt = sentAt;
    this.#intervalMs = Math.max(1, Math.floor(ttlMs / 3));
    this.#armExpiry();
    if (keepAlive) {
      this.#keepAliveTimer = setInterval(() => this.#fire(), this.#intervalMs);
      this.#keepAliveTimer.unref();
      void this.#open();
    }
  }

  /** Grants a lease and (unless `keepAlive: false`) starts keeping it alive. */
  static async grant(etcd: Etcd3, options: SessionOptions): Promise<Session> {
    assertTtlMs('ttlMs', options.ttlMs);
    const callTimeoutMs = options.callTimeoutMs ?? 5_000;
    const sentAt = monotonicNow();
    let response: { ID: string; TTL: string };
    try {
      response = await etcd.leaseClient.leaseGrant(
        { TTL: Math.max(1, Math.ceil(options.ttlMs / 1000)) },
        callOptions(callTimeoutMs),
      );
    } catch (error) {
      throw new BackendUnavailableError('etcd', `lease grant failed: ${messageOf(error)}`, { cause: error });
    }
    return new Session(
      etcd,
      response.ID,
      options.ttlMs,
      Number(response.TTL) * 1000,
      sentAt,
      callTimeoutMs,
      options.keepAlive ?? true,
    );
  }

  /** Aborted when the lease is lost, expires or the session is closed; `reason` is a `LockLostError`. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get alive(): boolean {
    return !this.#controller.signal.aborted && monotonicNow() < this.#validUntil;
  }

  /** Until when (on `monotonicNow()`) the lease is certainly still granted by the server. */
  get validUntil(): number {
    return this.#validUntil;
  }

  /** Called after every successful keep-alive (validity moved forward). Returns an unsubscribe. */
  onRenew(listener: () => void): () => void {
    this.#renewListeners.add(listener);
    return () => this.#renewListeners.delete(listener);
  }

  /**
   * Called once when the session ends (lost, expired or closed), right after `signal` aborts. Returns
   * an unsubscribe. A plain set, not a `signal` listener: every grant subscribes and unsubscribes, and
   * EventTarget listeners cost several times more.
   */
  onLost(listener: (reason: LockLostError) => void): () => void {
    this.#lostListeners.add(listener);
    return () => this.#lostListeners.delete(listener);
  }

  /** Sends one keep-alive now and resolves once the server has renewed the lease. */
  async keepAliveOnce(): Promise<void> {
    this.#throwIfEnded();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new BackendUnavailableError('etcd', `keep-alive unanswered after ${this.#callTimeoutMs} ms`));
      }, this.#callTimeoutMs);
      const waiter: RenewalWaiter = {
        after: monotonicNow(),
        settle: (error) => {
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        },
      };
      this.#waiters.push(waiter);
      this.#fire();
    });
  }

  /**
   * Stops the background keep-alive: from now on the lease lasts until `validUntil` unless
   * `keepAliveOnce()` renews it. Used to hand a waiter's lease over as a lock with a plain TTL.
   */
  stopKeepAlive(): void {
    this.#keepAlive = false;
    clearInterval(this.#keepAliveTimer);
    this.#keepAliveTimer = undefined;
  }

  /**
   * Stops keeping the lease alive and revokes it, which deletes every key attached to it. Idempotent.
   * Resolves true once etcd answered (revoked, or the lease was gone already); false when the revoke
   * got no answer (then see `revoke` and `droppedBy`). Only the first call revokes.
   */
  async close(): Promise<boolean> {
    if (this.#closed) return true;
    this.#closed = true;
    this.#end(new LockLostError('session', 'session closed'));
    return await this.revoke();
  }

  /** One revoke request (bounded by `callTimeoutMs`): true once etcd answered, false without an answer. */
  async revoke(): Promise<boolean> {
    try {
      await this.#etcd.leaseClient.leaseRevoke({ ID: this.id }, callOptions(this.#callTimeoutMs));
      return true;
    } catch (error) {
      // "lease not found": already expired or revoked, which is what was asked.
      return error instanceof EtcdLeaseInvalidError || isRefusal(error);
    }
  }

  /**
   * By when (on `monotonicNow()`) etcd has dropped this lease on its own at the latest, whatever
   * happens to a revoke: its granted TTL after the last keep-alive sent, plus one request deadline
   * for a keep-alive still in flight then. (An etcd leader change refreshes leases, which can only
   * make a revoke more useful, not this bound safer to rely on: it is for giving up retries.)
   */
  get droppedBy(): number {
    return this.#lastSentAt + this.grantedTtlMs + this.#callTimeoutMs;
  }

  #throwIfEnded(): void {
    if (this.#closed) throw new ClientClosedError(`etcd session ${this.idHex}`);
    if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
  }

  #open(): Promise<void> {
    if (this.#stream || this.#controller.signal.aborted) return Promise.resolve();
    this.#opening ??= openKeepAlive(this.#etcd, this.#avoidMember)
      .then(({ stream, member }) => {
        if (this.#controller.signal.aborted) {
          silence(stream);
          return;
        }
        this.#stream = stream;
        this.#streamMember = member;
        stream.on('data', (response: ILeaseKeepAliveResponse) => this.#answered(response));
        stream.on('error', (error: Error) => this.#dropStream(stream, error));
        stream.on('end', () => this.#dropStream(stream, new Error('keep-alive stream ended')));
        // Without background keep-alive a stream only carries what keepAliveOnce() asked for.
        if (this.#keepAlive || this.#waiters.length > 0) this.#fire();
      })
      .catch(() => this.#scheduleReopen())
      .finally(() => {
        this.#opening = undefined;
      });
    return this.#opening;
  }

  #fire(): void {
    if (this.#controller.signal.aborted) return;
    const stream = this.#stream;
    if (!stream) {
      void this.#open();
      return;
    }
    if (this.#dropIfStuck(stream)) return;
    this.#lastSentAt = monotonicNow();
    this.#pending.push(this.#lastSentAt);
    stream.write({ ID: this.id });
    // Checked on its own timer, not only at the next interval: a reopened stream on a silent member
    // is then left within 3/4 of an interval, not up to two (which, after the first one, was the TTL).
    this.#stuckTimer ??= setTimeout(() => {
      this.#stuckTimer = undefined;
      if (this.#stream) this.#dropIfStuck(this.#stream);
    }, this.#stuckAfterMs);
    this.#stuckTimer.unref();
  }

  /** Three quarters of an interval (timers may fire a little early), at least STUCK_AFTER_MS. */
  get #stuckAfterMs(): number {
    return Math.max(this.#intervalMs * 0.75, STUCK_AFTER_MS);
  }

  /**
   * A half-open connection, or a member gone silent, answers nothing and reports nothing: start over
   * on a new stream, on another member.
   */
  #dropIfStuck(stream: KeepAliveStream): boolean {
    const oldest = this.#pending[0];
    if (oldest === undefined || monotonicNow() - oldest < this.#stuckAfterMs) return false;
    this.#dropStream(stream, new Error('a keep-alive went unanswered for three quarters of an interval'));
    return true;
  }

  #answered(response: ILeaseKeepAliveResponse): void {
    const sentAt = this.#pending.shift();
    if (Number(response.TTL) <= 0) {
      this.#end(new LockLostError('session', 'etcd says the lease has expired or was revoked'));
      return;
    }
    if (sentAt === undefined || this.#controller.signal.aborted) return;
    const validUntil = sentAt + Math.min(this.ttlMs, Number(response.TTL) * 1000);
    if (validUntil > this.#validUntil) {
      this.#validUntil = validUntil;
      this.#armExpiry();
      for (const listener of this.#renewListeners) listener();
    }
    const renewed = this.#waiters.filter((w) => w.after <= sentAt);
    this.#waiters = this.#waiters.filter((w) => w.after > sentAt);
    for (const w of renewed) w.settle();
  }

  #dropStream(stream: KeepAliveStream, _error: unknown): void {
    if (this.#stream !== stream) return;
    this.#stream = undefined;
    this.#avoidMember = this.#streamMember;
    clearTimeout(this.#stuckTimer);
    this.#stuckTimer = undefined;
    this.#pending = [];
    silence(stream);
    this.#scheduleReopen();
  }

  #scheduleReopen(): void {
    if (this.#controller.signal.aborted || this.#reopenTimer) return;
    if (!this.#keepAlive && this.#waiters.length === 0) return;
    this.#reopenTimer = setTimeout(() => {
      this.#reopenTimer = undefined;
      void this.#open();
    }, REOPEN_DELAY_MS);
    this.#reopenTimer.unref();
  }

  #armExpiry(): void {
    if (this.#expiryTimer) clearTimeout(this.#expiryTimer);
    const delay = Math.max(0, this.#validUntil - monotonicNow());
    this.#expiryTimer = setTimeout(
      () => this.#end(new LockLostError('session', 'lease TTL ran out without a successful keep-alive')),
      delay,
    );
    this.#expiryTimer.unref();
  }

  #end(reason: LockLostError): void {
    if (this.#controller.signal.aborted) return;
    clearTimeout(this.#expiryTimer);
    clearInterval(this.#keepAliveTimer);
    clearTimeout(this.#reopenTimer);
    this.#reopenTimer = undefined;
    clearTimeout(this.#stuckTimer);
    this.#stuckTimer = undefined;
    if (this.#stream) silence(this.#stream);
    this.#stream = undefined;
    this.#pending = [];
    this.#controller.abort(reason);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w.settle(reason);
    this.#renewListeners.clear();
    const lost = [...this.#lostListeners];
    this.#lostListeners.clear();
    for (const listener of lost) listener(reason);
  }
}

/** Ends a stream we no longer read; a late error from it must not crash the process. */
function silence(stream: KeepAliveStream): void {
  // The runtime object is a grpc-js duplex stream, an EventEmitter.
  const emitter = stream as unknown as EventEmitter;
  emitter.removeAllListeners('data');
  emitter.removeAllListeners('end');
  emitter.on('error', () => {});
  stream.cancel();
}
