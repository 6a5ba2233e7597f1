import { randomUUID } from 'node:crypto';
import {
  type AcquireOptions,
  assertResource,
  ClientClosedError,
  InvalidArgumentError,
  isFencekitError,
  LockAbortedError,
  type LockCapabilities,
  LockLostError,
  LockTimeoutError,
  MAX_PERMITS,
  monotonicNow,
  normalizeAcquire,
  normalizeSemaphore,
  normalizeSemaphoreAcquire,
  normalizeSemaphoreTryAcquire,
  normalizeTryAcquire,
  type ReadWriteLock,
  type ReadWriteLockClient,
  type ReadWriteMode,
  readWriteLockOf,
  readWriteWeight,
  type Semaphore,
  type SemaphoreClient,
  type SemaphoreOptions,
  type TryAcquireOptions,
} from '@fencekit/core';
import type { Etcd3 } from 'etcd3';
import { anySignal, deadlineSignal } from './abort.js';
import type { EtcdClientOptions } from './client.js';
import { closeOpened, openClient, trackIn } from './client-setup.js';
import type { Connection } from './connection.js';
import { toBackendError } from './errors.js';
import type { EtcdGrant, EtcdLease } from './lease.js';
import { enterRoom } from './permit-room.js';
import { SessionGoneError, withdraw } from './queue.js';
import { EtcdReadWriteLease, EtcdSemaphoreLease } from './shared-lease.js';
import { type Granted, MAX_LAPSED_GRANTS, type QueueContext, waitForHead } from './wait.js';
import { withdrawInBackground } from './withdrawal.js';

/** One request to the permit engine. */
interface PermitRequest {
  readonly base: string;
  readonly name: string;
  readonly limit: number;
  readonly weight: number;
  readonly ttlMs: number;
  readonly waitMs: number;
  readonly signal: AbortSignal | undefined;
  readonly wait: boolean;
  /** The queue keys carry `limit` (a semaphore; see `WaitOptions.tag`). */
  readonly tagged: boolean;
}

/**
 * Fenced, fair semaphores and read-write locks on etcd, both recipes on one permit engine
 * (`permit-room.ts`): a semaphore of N permits is N units, a read-write lock `MAX_PERMITS` units of
 * which a reader takes 1 and a writer all.
 *
 * - Strict FIFO: waiters queue under `<prefix>/<semaphores|rwlocks>/<name>/queue/` in create-revision
 *   order, each watching only the key just ahead of it (the mutex's engine); only the head watches the
 *   holders (`…/leases/`). A large request at the head is never passed by smaller ones; a writer
 *   waiting blocks every reader behind it.
 * - Fence: the create revision of the grant's lease key. Only the head creates lease keys, so fences
 *   strictly increase in grant order, writers' included.
 * - Liveness and options as `EtcdClient`'s: keys live on a session kept alive in the background, or
 *   (`keepAlive: false`) on an etcd lease of `ttlMs` per grant that only `extend()` renews.
 */
export class EtcdSharedLockClient implements SemaphoreClient<bigint>, ReadWriteLockClient<bigint> {
  readonly backend = 'etcd';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: true };
  readonly #connection: Connection;
  readonly #context: QueueContext;
  readonly #closing = new AbortController();
  readonly #inflight = new Set<Promise<unknown>>();
  readonly #keepAlive: boolean;
  #closed: Promise<void> | undefined;

  constructor(options: EtcdClientOptions) {
    const opened = openClient(options, this.#closing.signal, (work) => this.#track(work));
    this.#connection = opened.connection;
    this.#context = opened.context;
    this.#keepAlive = opened.keepAlive;
  }

  /** The underlying `etcd3` client. */
  get etcd(): Etcd3 {
    return this.#connection.etcd;
  }

  semaphore(name: string, options: SemaphoreOptions): Semaphore<bigint> {
    const checked = normalizeSemaphore(name, options);
    const limit = checked.permits;
    const base = this.#base('semaphores', checked.name);
    const make = (permits: number) => (grant: EtcdGrant) => new EtcdSemaphoreLease(grant, permits);
    return {
      name: checked.name,
      permits: limit,
      acquire: async (acquireOptions) => {
        const r = normalizeSemaphoreAcquire(checked.name, limit, acquireOptions);
        const request = {
          base,
          name: checked.name,
          limit,
          weight: r.permits,
          ...r,
          wait: true,
          tagged: true,
        };
        const lease = await this.#acquire(request, make(r.permits));
        if (!lease) throw new LockTimeoutError(checked.name, r.waitMs);
        return lease;
      },
      tryAcquire: async (tryOptions) => {
        const r = normalizeSemaphoreTryAcquire(checked.name, limit, tryOptions);
        const waitMs = Number.POSITIVE_INFINITY;
        const request = {
          base,
          name: checked.name,
          limit,
          weight: r.permits,
          ...r,
          waitMs,
          wait: false,
          tagged: true,
        };
        return this.#acquire(request, make(r.permits));
      },
    };
  }

  readWriteLock(name: string): ReadWriteLock<bigint> {
    assertResource(name);
    const base = this.#base('rwlocks', name);
    const make = (mode: ReadWriteMode) => (grant: EtcdGrant) => new EtcdReadWriteLease(grant, mode);
    const acquire = async (mode: ReadWriteMode, options: AcquireOptions) => {
      const r = normalizeAcquire(name, options);
      const request = {
        base,
        name,
        limit: MAX_PERMITS,
        weight: readWriteWeight(mode),
        ...r,
        wait: true,
        tagged: false,
      };
      const lease = await this.#acquire(request, make(mode));
      if (!lease) throw new LockTimeoutError(name, r.waitMs);
      return lease;
    };
    const tryAcquire = async (mode: ReadWriteMode, options: TryAcquireOptions) => {
      const r = normalizeTryAcquire(name, options);
      const waitMs = Number.POSITIVE_INFINITY;
      const request = {
        base,
        name,
        limit: MAX_PERMITS,
        weight: readWriteWeight(mode),
        ...r,
        waitMs,
        wait: false,
        tagged: false,
      };
      return this.#acquire(request, make(mode));
    };
    return readWriteLockOf(name, acquire, tryAcquire);
  }

  /**
   * Stops waiters (`ClientClosedError`), then revokes every session, which deletes all the client's
   * keys at once (queue and lease keys) and ends their leases; closes the etcd client if it owns it.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  #base(kind: 'semaphores' | 'rwlocks', name: string): string {
    return `${this.#context.prefix}/${kind}/${encodeURIComponent(name)}/`;
  }

  /** Queue (the mutex's engine), then the room; null only for a try that did not get in at once. */
  async #acquire<L extends EtcdLease>(
    request: PermitRequest,
    make: (grant: EtcdGrant) => L,
  ): Promise<L | null> {
    if (this.#closing.signal.aborted) throw new ClientClosedError('etcd shared-lock client');
    const startedAt = monotonicNow();
    const left = () => request.waitMs - (monotonicNow() - startedAt);
    for (let grants = 1; ; grants++) {
      const head = await this.#track(
        waitForHead(this.#context, {
          kind: 'lock',
          queue: `${request.base}queue/`,
          name: request.name,
          ttlMs: request.ttlMs,
          waitMs: request.waitMs,
          startedAt,
          signal: request.signal,
          wait: request.wait,
          value: (session) => `${session.idHex}:${randomUUID()}`,
          // A semaphore's waiters agree on its size, as its holders do (a read-write lock's is fixed).
          tag: request.tagged
            ? {
                value: String(request.limit),
                mismatch: (other) =>
                  new InvalidArgumentError(
                    'permits',
                    request.limit,
                    `${other}, the permit count the waiters of "${request.name}" use`,
                  ),
              }
            : undefined,
        }),
      );
      if (!head) return null;
      // Without a ticket, enterRoom has already withdrawn the head's keys and checked its session in.
      const ticket = await this.#track(this.#enter(request, head, left()));
      if (ticket === 'again') {
        // Its session ended at the head: queue again (at the back) within the wait, a bounded number
        // of times (a try gets one attempt).
        if (request.wait && left() <= 0) throw new LockTimeoutError(request.name, request.waitMs);
        if (request.wait && grants < MAX_LAPSED_GRANTS) continue;
        throw new LockLostError(request.name, 'the session ended while waiting for room');
      }
      if (ticket === null) return null;
      // Granted: the queue key has done its job, the next waiter's turn. The session stays checked out
      // for this name until the lease ends (its onEnd checks it in).
      await this.#leaveQueue(head, false);
      // Per-grant sessions were kept alive only while waiting; from the grant on, only extend() renews.
      if (!this.#keepAlive) head.session.stopKeepAlive();
      const lease = make({
        context: this.#context,
        session: head.session,
        ticket,
        resource: request.name,
        owner: head.ticket.value,
        onEnd: head.checkIn,
      });
      if (lease.held) return lease;
      // Lapsed on the way (see EtcdClient): never hand that out; queue again while the wait allows.
      if (!request.wait || grants >= MAX_LAPSED_GRANTS || left() <= 0) {
        throw new LockLostError(request.name, 'the grant arrived after its validity had passed');
      }
    }
  }

  /** The room wait with the caller's stop conditions; 'again' when the head's session ended under it. */
  async #enter(request: PermitRequest, head: Granted, leftMs: number) {
    const deadline = deadlineSignal(leftMs, () => new LockTimeoutError(request.name, request.waitMs));
    const stop = anySignal([request.signal, deadline.signal, this.#closing.signal]);
    try {
      const room = {
        prefix: `${request.base}leases/`,
        name: request.name,
        limit: request.limit,
        weight: request.weight,
      };
      return await enterRoom(this.#context, head, room, stop.signal, request.wait);
    } catch (error) {
      if (request.signal?.aborted) throw new LockAbortedError(request.name, { cause: request.signal.reason });
      if (this.#closing.signal.aborted) throw this.#closing.signal.reason;
      // Past the deadline, whatever ended the wait (a request that failed as it ran out), it timed out.
      if (deadline.signal.aborted) {
        throw error instanceof LockTimeoutError
          ? error
          : new LockTimeoutError(request.name, request.waitMs, { cause: error });
      }
      if (error instanceof SessionGoneError) return 'again' as const;
      if (isFencekitError(error)) throw error;
      throw toBackendError('waiting', error);
    } finally {
      deadline.clear();
      stop.dispose();
    }
  }

  /**
   * Deletes the head's queue key before the acquire returns, so that no later call of this client (on
   * another session: this one stays checked out while its lease lives) finds it still queued ahead;
   * without an answer, it retries in the background. `checkIn`: the session goes back afterwards.
   */
  async #leaveQueue(head: Granted, checkIn: boolean): Promise<void> {
    const once = () => withdraw(this.#context, head.ticket).then(() => undefined);
    const answered = await once().then(
      () => true,
      () => false,
    );
    if (answered) {
      if (checkIn) head.checkIn();
      return;
    }
    const leaving = withdrawInBackground(once, head.session, this.#closing.signal);
    void this.#track(checkIn ? leaving.finally(head.checkIn) : leaving);
  }

  #track<T>(work: Promise<T>): Promise<T> {
    return trackIn(this.#inflight, work);
  }

  #close(): Promise<void> {
    return closeOpened(
      { connection: this.#connection, context: this.#context },
      this.#closing,
      this.#inflight,
      'etcd shared-lock client',
    );
  }
}
