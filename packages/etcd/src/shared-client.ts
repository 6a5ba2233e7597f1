import { randomUUID } from 'node:crypto';
import {
  type AcquireOptions,
  assertResource,
  Backoff,
  ClientClosedError,
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
import type { EtcdClientOptions } from './client.js';
import { closeOpened, openClient, trackIn } from './client-setup.js';
import type { Connection } from './connection.js';
import type { EtcdGrant, EtcdLease } from './lease.js';
import { permitTurn, permitValue } from './permit-queue.js';
import { PrefixWatches } from './prefix-watch.js';
import { EtcdReadWriteLease, EtcdSemaphoreLease } from './shared-lease.js';
import { backOffAfterLapse, type QueueContext, waitForHead } from './wait.js';

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
}

/**
 * Fenced, fair semaphores and read-write locks on etcd, both recipes on one permit engine
 * (`permit-queue.ts`): a semaphore of N permits is N units, a read-write lock `MAX_PERMITS` units of
 * which a reader takes 1 and a writer all.
 *
 * - Strict FIFO: every waiter and holder has one key under `<prefix>/<semaphores|rwlocks>/<name>/permits/`
 *   (value `limit:weight:owner`); a key is granted once the weights of every key created before it and
 *   its own fit in the limit, so the granted keys are always the oldest ones. A large request is never
 *   passed by smaller ones; a writer waiting blocks every reader behind it.
 * - Fence: the key's create revision, so fences increase in grant order, writers' strictly.
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
  readonly #watches: PrefixWatches;
  #closed: Promise<void> | undefined;

  constructor(options: EtcdClientOptions) {
    const opened = openClient(options, this.#closing.signal, (work) => this.#track(work));
    this.#connection = opened.connection;
    this.#context = opened.context;
    this.#keepAlive = opened.keepAlive;
    this.#watches = new PrefixWatches(this.#connection.etcd);
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
      };
      return this.#acquire(request, make(mode));
    };
    return readWriteLockOf(name, acquire, tryAcquire);
  }

  /**
   * Stops waiters (`ClientClosedError`), then revokes every session, which deletes all the client's
   * permit keys at once (held and waiting) and ends their leases; cancels its watches; closes the etcd
   * client if it owns it.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  #base(kind: 'semaphores' | 'rwlocks', name: string): string {
    return `${this.#context.prefix}/${kind}/${encodeURIComponent(name)}/`;
  }

  /**
   * Queues in the permit queue (`permit-queue.ts` on the mutex's join and withdrawal); null only for a
   * try that did not get in at once. A grant that lapsed on its way back is the mutex's lapse (see
   * `EtcdClient`): given back, then, for `acquire`, queued again after a back-off while `waitMs` allows.
   */
  async #acquire<L extends EtcdLease>(
    request: PermitRequest,
    make: (grant: EtcdGrant) => L,
  ): Promise<L | null> {
    if (this.#closing.signal.aborted) throw new ClientClosedError('etcd shared-lock client');
    const startedAt = monotonicNow();
    const backoff = new Backoff({ baseMs: 50, capMs: 500 });
    const room = {
      prefix: `${request.base}permits/`,
      name: request.name,
      limit: request.limit,
      weight: request.weight,
    };
    const turn = permitTurn(this.#context, room, this.#watches);
    for (;;) {
      const granted = await this.#track(
        waitForHead(this.#context, {
          kind: 'lock',
          queue: room.prefix,
          name: request.name,
          ttlMs: request.ttlMs,
          waitMs: request.waitMs,
          startedAt,
          signal: request.signal,
          wait: request.wait,
          value: (session) => permitValue(room, `${session.idHex}:${randomUUID()}`),
          turn,
        }),
      );
      if (!granted) return null;
      // Per-grant sessions were kept alive only while waiting; from the grant on, only extend() renews.
      if (!this.#keepAlive) granted.session.stopKeepAlive();
      const lease = make({
        context: this.#context,
        session: granted.session,
        ticket: granted.ticket,
        resource: request.name,
        owner: granted.ticket.value,
        onEnd: granted.checkIn,
      });
      // Reading `held`, not `signal`, keeps the lease from building a signal nobody may ever read.
      if (lease.held) return lease;
      // Lapsed on the way (a session TTL of tens of ms on a busy event loop): never hand that out.
      // Ending it checked the session in and withdraws the key if that session lives on.
      const lapsed = new LockLostError(request.name, 'the grant arrived after its validity had passed');
      if (!request.wait) throw lapsed;
      if (
        !(await backOffAfterLapse(
          backoff,
          [request.signal, this.#closing.signal],
          startedAt + request.waitMs,
        ))
      ) {
        throw new LockTimeoutError(request.name, request.waitMs, { cause: lapsed });
      }
    }
  }

  #track<T>(work: Promise<T>): Promise<T> {
    return trackIn(this.#inflight, work);
  }

  async #close(): Promise<void> {
    // closeOpened aborts the client's work before its first await: the waiters let their watches go.
    const closing = closeOpened(
      { connection: this.#connection, context: this.#context },
      this.#closing,
      this.#inflight,
      'etcd shared-lock client',
    );
    await this.#watches.close();
    await closing;
  }
}
