import {
  type AcquireOptions,
  abortedPromise,
  assertResource,
  assertTtlMs,
  ClientLifecycle,
  freshLease,
  type GrantedLease,
  InvalidArgumentError,
  LockAbortedError,
  type LockCapabilities,
  LockLostError,
  LockTimeoutError,
  MAX_PERMITS,
  type ManagedLease,
  ManagedReadWriteLease,
  ManagedSemaphoreLease,
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
  settleWithin,
  type TryAcquireOptions,
} from '@fencekit/core';
import { CANCEL_TIMEOUT_MS } from './bounds.js';
import { neverConnectedReason } from './connection-state.js';
import type { OpenedClient, RedisClient, RedisDeployment } from './deployment.js';
import { classifyFailure } from './failures.js';
import { DEFAULT_KEY_PREFIX } from './keys.js';
import { closeLockConnection, type LockConnection, openLockConnection } from './lock-connection.js';
import { newOwnerToken } from './owner.js';
import { PermitLeaseOperations } from './permit-lease-operations.js';
import {
  type PermitKeys,
  PermitNode,
  type PermitReply,
  permitKeys,
  permitReply,
  type RawPermitReply,
} from './permit-node.js';
import type { CommandDeadlines } from './script-call.js';
import { type AttemptOutcome, STOP_GRACE_MS, Waiter, waitForGrant } from './waiter.js';
import { awaitSubscription, type WakeSubscriber } from './wake.js';

export interface RedisSharedLockClientOptions {
  /** As `RedisLockClient`'s: an ioredis instance or Cluster (left open), options, a URL, `{ cluster }`. */
  connection: RedisDeployment;
  /** Prefix of every key; default "fencekit:". A semaphore's keys look like `fencekit:{name}:semaphore:holders`. */
  keyPrefix?: string;
  /** How long a waiter's queue entry lives without a heartbeat (default 3 000 ms), as `RedisLockClient`'s. */
  waiterTtlMs?: number;
}

/** How many names' key lists a client keeps at hand. */
const KEY_CACHE_SIZE = 1_000;

/** One grant asked of the permit engine. */
interface PermitRequest {
  readonly kind: 'semaphore' | 'rwlock';
  readonly name: string;
  readonly keys: PermitKeys;
  readonly limit: number;
  readonly weight: number;
  readonly ttlMs: number;
}

type Grant = { readonly fence: string; readonly sentAt: number };
type MakeLease<L> = (grant: GrantedLease<bigint>) => L;

/**
 * Fenced, fair semaphores and read-write locks on one Redis, both recipes on one permit engine (Lua,
 * `permit-scripts.lua.ts`): a semaphore of N permits is N units, a read-write lock `MAX_PERMITS` units
 * of which a reader takes 1 and a writer all. The uncontended grant is one script call (one round
 * trip); waiters queue in Redis in arrival order and are handed their grant, with its fence, by the
 * script that frees the units, then woken by PUBLISH on their client's channel, as the mutex's are
 * (`WakeSubscriber`, `waitForGrant`), with the heartbeat as fallback.
 */
export class RedisSharedLockClient implements SemaphoreClient<bigint>, ReadWriteLockClient<bigint> {
  readonly backend = 'redis';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: false };
  readonly #connection: OpenedClient;
  readonly #node: PermitNode;
  readonly #prefix: string;
  readonly #waiterTtlMs: number;
  readonly #wake: WakeSubscriber;
  readonly #deadlines: CommandDeadlines | undefined;
  readonly #opened: LockConnection;
  readonly #lifecycle = new ClientLifecycle<ManagedLease<bigint>>('RedisSharedLockClient');
  readonly #keys = new Map<string, PermitKeys>();
  readonly #forgetLease = (lease: ManagedLease<bigint>): void => this.#lifecycle.forget(lease);

  constructor(options: RedisSharedLockClientOptions) {
    if (typeof options !== 'object' || options === null || options.connection === undefined) {
      throw new InvalidArgumentError('options', options, 'an object with a connection');
    }
    this.#prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    if (typeof this.#prefix !== 'string') {
      throw new InvalidArgumentError('keyPrefix', options.keyPrefix, 'a string');
    }
    this.#waiterTtlMs = options.waiterTtlMs ?? 3_000;
    assertTtlMs('waiterTtlMs', this.#waiterTtlMs);
    this.#opened = openLockConnection(options.connection, this.#prefix, this.#waiterTtlMs);
    this.#connection = this.#opened.connection;
    this.#deadlines = this.#opened.deadlines;
    this.#wake = this.#opened.wake;
    this.#node = new PermitNode(this.#connection.redis, this.#deadlines);
  }

  /** The ioredis connection (or Cluster) commands go through. */
  get redis(): RedisClient {
    return this.#connection.redis;
  }

  semaphore(name: string, options: SemaphoreOptions): Semaphore<bigint> {
    const checked = normalizeSemaphore(name, options);
    const keys = this.#keysOf('semaphore', checked.name);
    const permit = (weight: number, ttlMs: number): PermitRequest => ({
      kind: 'semaphore',
      name: checked.name,
      keys,
      limit: checked.permits,
      weight,
      ttlMs,
    });
    const make =
      (permits: number): MakeLease<ManagedSemaphoreLease<bigint>> =>
      (grant) =>
        new ManagedSemaphoreLease(grant, permits);
    return {
      name: checked.name,
      permits: checked.permits,
      acquire: async (acquireOptions) => {
        const request = normalizeSemaphoreAcquire(checked.name, checked.permits, acquireOptions);
        return this.#acquire(permit(request.permits, request.ttlMs), request, make(request.permits));
      },
      tryAcquire: async (tryOptions) => {
        const request = normalizeSemaphoreTryAcquire(checked.name, checked.permits, tryOptions);
        return this.#tryAcquire(
          permit(request.permits, request.ttlMs),
          request.signal,
          make(request.permits),
        );
      },
    };
  }

  readWriteLock(name: string): ReadWriteLock<bigint> {
    assertResource(name);
    const keys = this.#keysOf('rwlock', name);
    const permit = (mode: ReadWriteMode, ttlMs: number): PermitRequest => ({
      kind: 'rwlock',
      name,
      keys,
      limit: MAX_PERMITS,
      weight: readWriteWeight(mode),
      ttlMs,
    });
    const make =
      (mode: ReadWriteMode): MakeLease<ManagedReadWriteLease<bigint>> =>
      (grant) =>
        new ManagedReadWriteLease(grant, mode);
    const acquire = async (mode: ReadWriteMode, options: AcquireOptions) => {
      const request = normalizeAcquire(name, options);
      return this.#acquire(permit(mode, request.ttlMs), request, make(mode));
    };
    const tryAcquire = async (mode: ReadWriteMode, options: TryAcquireOptions) => {
      const request = normalizeTryAcquire(name, options);
      return this.#tryAcquire(permit(mode, request.ttlMs), request.signal, make(mode));
    };
    return readWriteLockOf(name, acquire, tryAcquire);
  }

  close(): Promise<void> {
    return this.#lifecycle.close(() => this.#freeConnections());
  }

  /** Key names of recently used names, built once rather than on every handle. */
  #keysOf(kind: 'semaphore' | 'rwlock', name: string): PermitKeys {
    const cacheKey = `${kind}:${name}`;
    let keys = this.#keys.get(cacheKey);
    if (keys === undefined) {
      // Bounded: a caller cycling through many names starts over rather than growing it.
      if (this.#keys.size >= KEY_CACHE_SIZE) this.#keys.clear();
      keys = permitKeys(this.#prefix, kind, name);
      this.#keys.set(cacheKey, keys);
    }
    return keys;
  }

  async #tryAcquire<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    signal: AbortSignal | undefined,
    make: MakeLease<L>,
  ): Promise<L | null> {
    this.#lifecycle.assertOpen();
    if (signal?.aborted) throw new LockAbortedError(permit.name, { cause: signal.reason });
    const lease = await this.#lifecycle.track(this.#once(permit, make));
    if (lease !== null && signal?.aborted) {
      await lease.release().catch(() => undefined);
      throw new LockAbortedError(permit.name, { cause: signal.reason });
    }
    return lease;
  }

  async #acquire<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    request: { waitMs: number; signal: AbortSignal | undefined },
    make: MakeLease<L>,
  ): Promise<L> {
    this.#lifecycle.assertOpen();
    const { signal } = request;
    if (signal?.aborted) throw new LockAbortedError(permit.name, { cause: signal.reason });
    const startedAt = monotonicNow();
    if (
      request.waitMs > 0 &&
      signal === undefined &&
      this.#wake.isReady(this.#wake.channelFor(permit.name))
    ) {
      // Subscribed already (this client has waited before): the first attempt queues at once when
      // the units are taken, so a contended acquire is one script call before it parks, not a
      // refused try and then a second call to queue. Granted at once, it is a lease as below.
      return this.#lifecycle.track(this.#wait(permit, request, startedAt, make, true));
    }
    // The uncontended case first: one script call, no subscription, no waiter.
    let lease: L | null;
    let waiting: Promise<L> | undefined;
    this.#lifecycle.begin();
    try {
      const first = this.#once(permit, make);
      lease = signal === undefined ? await first : await this.#unlessAborted(first, permit.name, signal);
      if (lease === null && request.waitMs > 0 && !signal?.aborted) {
        this.#lifecycle.assertOpen();
        waiting = this.#lifecycle.track(this.#wait(permit, request, startedAt, make, false));
      }
    } finally {
      this.#lifecycle.done();
    }
    if (waiting !== undefined) return waiting;
    if (signal?.aborted) {
      await lease?.release().catch(() => undefined);
      throw new LockAbortedError(permit.name, { cause: signal.reason });
    }
    if (lease !== null) return lease;
    throw new LockTimeoutError(permit.name, 0);
  }

  /**
   * The first attempt's answer, or `LockAbortedError` once `signal` aborts: a server that stopped
   * answering must not hold the caller past its abort for a whole command timeout. A grant that
   * arrives after the abort is given back, tracked so that `close()` waits for it.
   */
  async #unlessAborted<L extends ManagedLease<bigint>>(
    first: Promise<L | null>,
    name: string,
    signal: AbortSignal,
  ): Promise<L | null> {
    const aborted = abortedPromise(signal);
    try {
      return await Promise.race([first, aborted.promise]);
    } catch (error) {
      if (!signal.aborted) throw error;
      const cleanup = this.#lifecycle.track(
        first.then(
          (late) => late?.release(),
          () => undefined,
        ),
      );
      await settleWithin(
        cleanup.catch(() => undefined),
        STOP_GRACE_MS,
      );
      throw new LockAbortedError(name, { cause: signal.reason });
    } finally {
      aborted.dispose();
    }
  }

  /**
   * One attempt that never queues: the lease or null. Unless this client last found the name busy,
   * it is the fast script (three keys; it grants when nobody holds or waits and otherwise decides
   * nothing), then the full script only if that found the name held or queued.
   */
  async #once<L extends ManagedLease<bigint>>(permit: PermitRequest, make: MakeLease<L>): Promise<L | null> {
    const owner = newOwnerToken();
    const keys = permit.keys;
    let sentAt = monotonicNow();
    let raw: RawPermitReply | null = null;
    try {
      if (!keys.busy) {
        raw = await this.#node.fastAttempt(keys, owner, permit.weight, permit.limit, permit.ttlMs);
      }
      if (raw === null) {
        keys.busy = true;
        // Validity counts from this request: the grant, if any, comes after it.
        sentAt = monotonicNow();
        raw = await this.#node.attemptRaw(keys, this.#attempt(permit, owner, 'try', ''));
      }
    } catch (error) {
      this.#lifecycle.track(this.#cancel(permit, owner));
      throw this.#failure(permit.name, error);
    }
    // The common case, with no reply object and no further promise: a grant that found nobody
    // holding or waiting (the fence alone), its validity not yet run out.
    if (!Array.isArray(raw)) {
      keys.busy = false;
      if (sentAt + permit.ttlMs > monotonicNow()) {
        return this.#newLease(permit, owner, BigInt(raw), sentAt, make);
      }
    }
    const reply = permitReply(raw);
    if (reply.kind === 'mismatch') throw mismatch(permit, reply.limit);
    if (reply.kind === 'refused') return null;
    return this.#lease(permit, owner, { fence: reply.fence, sentAt }, make);
  }

  /**
   * Queues and parks until granted. `queueAtOnce`: no attempt was made yet and the caller has no
   * signal; the first attempt is sent here, after the waiter listens (a grant's message may beat
   * the reply), and a grant from it is returned as is.
   */
  async #wait<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    request: { waitMs: number; signal: AbortSignal | undefined },
    startedAt: number,
    make: MakeLease<L>,
    queueAtOnce: boolean,
  ): Promise<L> {
    const channel = this.#wake.channelFor(permit.name);
    const ready = this.#wake.ready(channel);
    try {
      if (ready !== undefined) {
        // At most a heartbeat, and never past waitMs (see awaitSubscription).
        await awaitSubscription(ready, {
          backend: this.backend,
          resource: permit.name,
          boundMs: Math.min(this.#waiterTtlMs / 3, startedAt + request.waitMs - monotonicNow()),
          signal: request.signal,
        });
      }
      const owner = newOwnerToken();
      const waiter = new Waiter();
      this.#wake.on(owner, waiter.wake);
      // As the mutex's waiter: a grant handed over counts its validity from the last attempt that
      // was refused (the grant came after it), and only when its fence is above what that refusal
      // saw (a late message about an older grant must not count from there).
      let queuedSince: number | undefined;
      let fenceSeen: bigint | undefined;
      const attempt = async (): Promise<AttemptOutcome<Grant>> => {
        const sentAt = monotonicNow();
        let reply: PermitReply;
        try {
          reply = await this.#node.attempt(permit.keys, this.#attempt(permit, owner, 'wait', channel));
        } catch (error) {
          throw this.#failure(permit.name, error);
        }
        if (reply.kind === 'mismatch') throw mismatch(permit, reply.limit);
        if (reply.kind === 'granted') return { grant: { fence: reply.fence, sentAt } };
        permit.keys.busy = true;
        queuedSince = sentAt;
        fenceSeen = BigInt(reply.fenceSeen);
        return { retryMs: reply.retryMs + 1 };
      };
      try {
        let initial: { retryMs: number } | undefined;
        if (queueAtOnce) {
          let first: AttemptOutcome<Grant>;
          try {
            first = await attempt();
          } catch (error) {
            // It may have queued us before failing: leave the queue (sent after it, so applied after).
            this.#lifecycle.track(this.#cancel(permit, owner));
            throw error;
          }
          if ('grant' in first) return await this.#lease(permit, owner, first.grant, make);
          initial = first;
        }
        const grant = await waitForGrant<Grant>({
          resource: permit.name,
          startedAt,
          waitMs: request.waitMs,
          signal: request.signal,
          closing: this.#lifecycle.closing,
          clientName: 'RedisSharedLockClient',
          heartbeatMs: this.#waiterTtlMs / 3,
          // One ordered connection: the cancel lands after the attempt in flight.
          attemptBoundMs: 0,
          waiter,
          attempt,
          initial,
          handedOver: () => {
            const fence = waiter.takeHandedFence();
            if (fence === undefined || queuedSince === undefined) return undefined;
            if (fenceSeen !== undefined && BigInt(fence) <= fenceSeen) return undefined;
            // Long parked: the next attempt re-arms the grant and counts validity from its own send.
            if (queuedSince + permit.ttlMs / 2 < monotonicNow()) return undefined;
            return { fence, sentAt: queuedSince };
          },
          cancel: () => this.#cancel(permit, owner),
          stopGraceMs: STOP_GRACE_MS,
          track: (cleanup) => this.#lifecycle.track(cleanup),
        });
        return await this.#lease(permit, owner, grant, make);
      } finally {
        this.#wake.off(owner);
      }
    } finally {
      this.#wake.leave(channel);
    }
  }

  #attempt(permit: PermitRequest, owner: string, mode: 'try' | 'wait', channel: string) {
    return {
      owner,
      weight: permit.weight,
      limit: permit.limit,
      ttlMs: permit.ttlMs,
      mode,
      waiterTtlMs: this.#waiterTtlMs,
      sharded: this.#connection.cluster,
      channel,
    };
  }

  async #lease<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    owner: string,
    grant: Grant,
    make: MakeLease<L>,
  ): Promise<L> {
    if (grant.sentAt + permit.ttlMs <= monotonicNow()) {
      // Its validity ran out on the way back: the server may already have handed the units on.
      await this.#cancel(permit, owner);
      throw new LockLostError(permit.name, 'the grant had expired by the time its answer arrived');
    }
    return freshLease(this.#newLease(permit, owner, BigInt(grant.fence), grant.sentAt, make));
  }

  #newLease<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    owner: string,
    fence: bigint,
    sentAt: number,
    make: MakeLease<L>,
  ): L {
    const operations = new PermitLeaseOperations(
      this.backend,
      this.#node,
      permit.name,
      permit.keys,
      owner,
      permit.limit,
    );
    const lease = make({
      resource: permit.name,
      owner,
      fence,
      sentAt,
      ttlMs: permit.ttlMs,
      operations,
      onEnd: this.#forgetLease,
      lazyExpiry: true,
    });
    operations.lease = lease;
    this.#lifecycle.hold(lease);
    return lease;
  }

  /** Leaves the queue and gives back a grant that may have raced with a failure or a stop. */
  async #cancel(permit: PermitRequest, owner: string): Promise<void> {
    await settleWithin(this.#node.release(permit.keys, owner, permit.limit), CANCEL_TIMEOUT_MS);
  }

  #failure(name: string, error: unknown) {
    const neverConnected = neverConnectedReason(this.#connection.redis, this.#connection.name);
    return classifyFailure(this.backend, name, 'acquire', error, neverConnected);
  }

  #freeConnections(): Promise<void> {
    return closeLockConnection(this.#opened);
  }
}

function mismatch(permit: PermitRequest, stored: string): InvalidArgumentError {
  return new InvalidArgumentError(
    'permits',
    permit.limit,
    `${stored}, the permit count the holders and waiters of "${permit.name}" use`,
  );
}
