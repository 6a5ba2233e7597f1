import {
  type AcquireOptions,
  assertResource,
  assertSignal,
  assertTtlMs,
  BackendUnavailableError,
  ClientLifecycle,
  type IndeterminateError,
  InvalidArgumentError,
  LockAbortedError,
  type LockCapabilities,
  type LockClient,
  LockLostError,
  LockTimeoutError,
  ManagedLease,
  monotonicNow,
  normalizeAcquire,
  settleWithin,
  type TryAcquireOptions,
} from '@fencekit/core';
import { CANCEL_TIMEOUT_MS } from './bounds.js';
import {
  type ConnectionMark,
  connectionMark,
  neverConnectedReason,
  notSentReason,
} from './connection-state.js';
import {
  type OpenedClient,
  type RedisClient,
  type RedisDeployment,
  waitForReplicasOf,
} from './deployment.js';
import { classifyFailure } from './failures.js';
import { assertClusterResource, DEFAULT_KEY_PREFIX, type ResourceKeys, resourceKeys } from './keys.js';
import { RedisLeaseOperations } from './lease-operations.js';
import { closeLockConnection, type LockConnection, openLockConnection } from './lock-connection.js';
import { type AttemptReply, LockNode, tryAcquireReply } from './node.js';
import { newOwnerToken } from './owner.js';
import type { CommandDeadlines } from './script-call.js';
import { STOP_GRACE_MS, Waiter, waitForGrant } from './waiter.js';
import { awaitSubscription, type WakeSubscriber } from './wake.js';

export interface RedisLockClientOptions {
  /**
   * An ioredis instance or `Cluster` (left open by `close()`), connection options (with `sentinels`
   * and `name`: the primary found through Sentinel), a redis:// URL, or `{ cluster: startupNodes,
   * options? }` for a Redis Cluster fencekit opens.
   */
  connection: RedisDeployment;
  /** Prefix of every key fencekit writes; default "fencekit:". Keys look like `fencekit:{resource}:lock`. */
  keyPrefix?: string;
  /**
   * How long a waiter's queue entry lives without a heartbeat (default 3 000 ms); live waiters
   * refresh their entry every third of it. A waiter that dies is dropped from the queue after at
   * most this long, but a release within that time hands it the lock (it asked for that), which
   * then lasts its TTL like the lease of a holder that died: waiterTtlMs + ttlMs at worst.
   */
  waiterTtlMs?: number;
  /**
   * After each grant, `WAIT count timeoutMs` for that many replicas to acknowledge it; fewer → the
   * grant is given back and acquire fails with `BackendUnavailableError`. Without it a failover to a
   * replica that had not yet received the grant loses the grant (two holders) and can reset the
   * fence counter to a value already handed out.
   */
  replicas?: { count: number; timeoutMs: number };
  /**
   * 'counter' (default): a fence is the resource's counter. 'epoch': a fence is epoch × 10^12 +
   * counter, the epoch being Redis Cluster's config epoch of the primary or, elsewhere, the count of
   * primaries the resource has had (README, "Epoch fences"): grants of a promoted replica stay above
   * the fences the old primary handed out, even when the counter rolled back. Every client of a
   * resource must use the same setting.
   */
  fence?: 'counter' | 'epoch';
}

type Grant = Extract<AttemptReply, { granted: true }> & { sentAt: number };

/** Gives back a lease granted to an acquire that was aborted meanwhile. Never rejects. */
async function giveBack(lease: ManagedLease<bigint> | null | undefined): Promise<void> {
  await lease?.release().catch(ignore);
}

function ignore(): void {}

/** How many resources' key names a client keeps at hand. */
const KEY_CACHE_SIZE = 1_000;

/**
 * Fenced locks on one Redis. A grant is one Lua script: `SET NX PX` plus `INCR` of the resource's
 * fence counter, so every grant carries a fence strictly greater than any before it (as long as the
 * server keeps its data: see `replicas`). Waiters queue in Redis in arrival order (FIFO across
 * processes) and are woken by the release that frees the lock, with a timer as fallback for a
 * holder that dies and lets its lease expire.
 */
export class RedisLockClient implements LockClient<bigint> {
  readonly backend = 'redis';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: false };
  readonly #connection: OpenedClient;
  readonly #node: LockNode;
  readonly #prefix: string;
  readonly #waiterTtlMs: number;
  readonly #replicas: { count: number; timeoutMs: number } | undefined;
  readonly #wake: WakeSubscriber;
  readonly #deadlines: CommandDeadlines | undefined;
  /** The connections it opened, freed by close(). */
  readonly #opened: LockConnection;
  readonly #lifecycle = new ClientLifecycle<ManagedLease<bigint>>('RedisLockClient');
  /** Key names of recently used resources: built once, not five string concatenations per acquire. */
  readonly #keys = new Map<string, ResourceKeys>();
  /** Every lease's `onEnd`: one function for all, not a closure per grant. */
  readonly #forgetLease = (lease: ManagedLease<bigint>): void => this.#lifecycle.forget(lease);

  constructor(options: RedisLockClientOptions) {
    if (typeof options !== 'object' || options === null || options.connection === undefined) {
      throw new InvalidArgumentError('options', options, 'an object with a connection');
    }
    this.#prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    if (typeof this.#prefix !== 'string') {
      throw new InvalidArgumentError('keyPrefix', options.keyPrefix, 'a string');
    }
    this.#waiterTtlMs = options.waiterTtlMs ?? 3_000;
    assertTtlMs('waiterTtlMs', this.#waiterTtlMs);
    if (options.replicas !== undefined) {
      const { count, timeoutMs } = options.replicas;
      if (!Number.isInteger(count) || count < 1) {
        throw new InvalidArgumentError('replicas.count', count, 'a positive integer');
      }
      // WAIT takes whole milliseconds, as every TTL here.
      assertTtlMs('replicas.timeoutMs', timeoutMs);
    }
    this.#replicas = options.replicas;
    const fence = options.fence ?? 'counter';
    if (fence !== 'counter' && fence !== 'epoch') {
      throw new InvalidArgumentError('fence', options.fence, "'counter' or 'epoch'");
    }
    this.#opened = openLockConnection(options.connection, this.#prefix, this.#waiterTtlMs);
    this.#connection = this.#opened.connection;
    this.#deadlines = this.#opened.deadlines;
    this.#wake = this.#opened.wake;
    this.#node = new LockNode(
      this.#connection.name,
      this.#connection.redis,
      this.#deadlines,
      fence === 'epoch',
    );
  }

  /** The ioredis connection (or Cluster) commands go through. */
  get redis(): RedisClient {
    return this.#connection.redis;
  }

  async tryAcquire(resource: string, options: TryAcquireOptions): Promise<ManagedLease<bigint> | null> {
    this.#lifecycle.assertOpen();
    assertResource(resource);
    if (this.#connection.cluster) assertClusterResource(resource);
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', options, 'an object with ttlMs');
    }
    assertTtlMs('ttlMs', options.ttlMs);
    assertSignal('signal', options.signal);
    if (options.signal?.aborted) throw new LockAbortedError(resource, { cause: options.signal.reason });
    return this.#lifecycle.track(
      this.#tryAcquire(resource, options.ttlMs, true),
    ) as Promise<ManagedLease<bigint> | null>;
  }

  async acquire(resource: string, options: AcquireOptions): Promise<ManagedLease<bigint>> {
    this.#lifecycle.assertOpen();
    const request = normalizeAcquire(resource, options);
    if (this.#connection.cluster) assertClusterResource(request.resource);
    if (request.signal?.aborted) {
      throw new LockAbortedError(request.resource, { cause: request.signal.reason });
    }
    const startedAt = monotonicNow();
    // Most acquires find the lock free: the small fast-path script first, with no waiter set up.
    // It does not jump the queue: with waiters queued it decides nothing and the wait begins. With
    // no wait at all (waitMs 0) it decides, exactly as tryAcquire does.
    let lease: ManagedLease<bigint> | null | undefined;
    let waiting: Promise<ManagedLease<bigint>> | undefined;
    this.#lifecycle.begin();
    try {
      const fastPath = this.#tryAcquire(request.resource, request.ttlMs, request.waitMs === 0);
      // Only a caller's signal adds a listener: the common call (no signal) pays for nothing.
      lease =
        request.signal === undefined
          ? await fastPath
          : await this.#unlessAborted(fastPath, request.resource, request.signal);
      if ((lease === null || lease === undefined) && request.waitMs > 0) {
        // Checked and tracked before the fast path's own count ends: a close() that began meanwhile
        // would otherwise find nothing in flight and free the connection under the wait, whose
        // queue entry (or a grant handed to it) would then outlive the client.
        this.#lifecycle.assertOpen();
        waiting = this.#lifecycle.track(this.#acquire(request, startedAt));
      }
    } finally {
      this.#lifecycle.done();
    }
    if (waiting !== undefined) return waiting;
    if (lease !== null && lease !== undefined) {
      if (!request.signal?.aborted) return lease;
      await lease.release().catch(() => undefined);
      throw new LockAbortedError(request.resource, { cause: request.signal.reason });
    }
    throw new LockTimeoutError(request.resource, 0);
  }

  close(): Promise<void> {
    return this.#lifecycle.close(() => this.#freeConnections());
  }

  /**
   * The fast path's answer, or `LockAbortedError` once `signal` aborts: a server that stopped
   * answering must not hold the caller past its abort for the request's whole timeout. As any
   * stopped acquire, it waits up to `STOP_GRACE_MS` for the request (a grant that raced with the
   * abort is given back before it rejects, on a server that answers); past that the request
   * finishes in the background, tracked (close() waits for it), a late grant given back.
   */
  #unlessAborted(
    fastPath: Promise<ManagedLease<bigint> | null | undefined>,
    resource: string,
    signal: AbortSignal,
  ): Promise<ManagedLease<bigint> | null | undefined> {
    return new Promise((resolve, reject) => {
      let aborted = false;
      const onAbort = (): void => {
        aborted = true;
        // Tracked at once, while acquire's own count still holds, so close() never misses it.
        const cleanup = this.#lifecycle.track(fastPath.then(giveBack, ignore));
        const error = new LockAbortedError(resource, { cause: signal.reason });
        void settleWithin(cleanup, STOP_GRACE_MS).then(() => reject(error));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      // After an abort the answer belongs to the clean-up: a lease is given back, never returned.
      fastPath.then(
        (lease) => {
          if (aborted) return;
          signal.removeEventListener('abort', onAbort);
          resolve(lease);
        },
        (error: unknown) => {
          if (aborted) return;
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /**
   * One attempt that never queues: a lease, null when the lock is taken, or (unless `decide`)
   * undefined when waiters are queued and the fast path could not tell whether we are allowed in.
   */
  async #tryAcquire(
    resource: string,
    ttlMs: number,
    decide: boolean,
  ): Promise<ManagedLease<bigint> | null | undefined> {
    const keys = this.#keysOf(resource);
    const owner = newOwnerToken();
    let sentAt = monotonicNow();
    let raw: number | string;
    let reply: AttemptReply | undefined;
    const mark = connectionMark(this.#connection.redis);
    try {
      raw = await this.#node.tryAcquireRaw(keys, owner, ttlMs, true);
      if (raw === -1) {
        // Waiters are queued: the fast path decided nothing.
        if (!decide) return undefined;
        sentAt = monotonicNow();
        reply = await this.#node.attempt(keys, {
          owner,
          ttlMs,
          mode: 'try',
          ticket: '',
          waiterTtlMs: this.#waiterTtlMs,
          channel: '',
          fenced: true,
          handoff: false,
        });
      }
    } catch (error) {
      // Sent after the failed request on the same connection, so applied after it whatever it did;
      // not waited for: a server that stopped answering would add the cancel's 2 s to the failure.
      // Tracked, so close() still waits for it.
      this.#lifecycle.track(this.#cancel(keys, owner));
      throw this.#acquireFailure(resource, error, mark);
    }
    // The common case, with no reply object, fence string or other promise: granted with a fence
    // (this client always asks for one, so the answer is > 0), validity left, no replicas to wait for.
    if (
      reply === undefined &&
      (typeof raw === 'string' || raw > 0) &&
      this.#replicas === undefined &&
      sentAt + ttlMs > monotonicNow()
    ) {
      return this.#newLease(resource, keys, owner, BigInt(raw), sentAt, ttlMs);
    }
    // raw is not -1 when reply is still undefined, so the fast path's answer decides.
    reply ??= tryAcquireReply(raw) as AttemptReply;
    if (!reply.granted) return null;
    return this.#lease(resource, keys, owner, { ...reply, sentAt }, ttlMs);
  }

  /** The waiting part of `acquire`: queue up, park until handed the lock (or woken), repeat. */
  async #acquire(
    request: { resource: string; ttlMs: number; waitMs: number; signal: AbortSignal | undefined },
    startedAt: number,
  ): Promise<ManagedLease<bigint>> {
    const { resource } = request;
    const keys = this.#keysOf(resource);
    const owner = newOwnerToken();
    const channel = this.#wake.channelFor(resource);
    const ready = this.#wake.ready(channel);
    try {
      return await this.#wait(request, startedAt, keys, owner, channel, ready);
    } finally {
      this.#wake.leave(channel);
    }
  }

  async #wait(
    request: { resource: string; ttlMs: number; waitMs: number; signal: AbortSignal | undefined },
    startedAt: number,
    keys: ResourceKeys,
    owner: string,
    channel: string,
    ready: Promise<void> | undefined,
  ): Promise<ManagedLease<bigint>> {
    const { resource, ttlMs } = request;
    if (ready !== undefined) {
      // At most a heartbeat, and never past waitMs: the waiter's heartbeat covers what a missing
      // subscription would have told it (see awaitSubscription).
      await awaitSubscription(ready, {
        backend: this.backend,
        resource,
        boundMs: Math.min(this.#waiterTtlMs / 3, startedAt + request.waitMs - monotonicNow()),
        signal: request.signal,
      });
    }
    const waiter = new Waiter();
    this.#wake.on(owner, waiter.wake);
    // 'auto': the first attempt takes a ticket from the server; later ones keep that place.
    let ticket = 'auto';
    // When the last attempt answered "queued" was sent: a grant handed over by a release happened
    // after that, so the lease's validity counts from there (never from when the news arrived).
    let queuedSince: number | undefined;
    // The fence counter that answer saw: a grant made after it carries a higher fence. A message
    // about an older grant (one that lapsed before that request arrived, the message held up on the
    // way) must not count its validity from that request.
    let queuedFence: bigint | undefined;
    try {
      const grant = await waitForGrant<Grant>({
        resource,
        startedAt,
        waitMs: request.waitMs,
        signal: request.signal,
        closing: this.#lifecycle.closing,
        clientName: 'RedisLockClient',
        heartbeatMs: this.#waiterTtlMs / 3,
        // One connection, whose commands Redis runs in order (ioredis resends them in order after
        // a reconnect): the cancel lands after the attempt in flight without waiting for it.
        attemptBoundMs: 0,
        waiter,
        attempt: async () => {
          const sentAt = monotonicNow();
          const mark = connectionMark(this.#connection.redis);
          let reply: AttemptReply;
          try {
            reply = await this.#node.attempt(keys, {
              owner,
              ttlMs,
              mode: 'wait',
              ticket,
              waiterTtlMs: this.#waiterTtlMs,
              channel,
              fenced: true,
              handoff: true,
            });
          } catch (error) {
            throw this.#acquireFailure(resource, error, mark);
          }
          if (reply.granted) return { grant: { ...reply, sentAt } };
          ticket = String(reply.ticket);
          queuedSince = sentAt;
          queuedFence = reply.fenceSeen === undefined ? undefined : BigInt(reply.fenceSeen);
          return { retryMs: reply.retryMs + 1 };
        },
        handedOver: () => {
          const fence = waiter.takeHandedFence();
          if (fence === undefined || queuedSince === undefined) return undefined;
          // WAIT covers only this connection's own writes, and the grant was written by the
          // releaser's: the next attempt re-arms the grant (a write of ours) and WAITs after it.
          if (this.#replicas !== undefined) return undefined;
          if (queuedFence !== undefined && BigInt(fence) <= queuedFence) return undefined;
          // Long parked: too little validity would be left, so the next attempt re-arms the
          // handed-over grant (the script sees we hold it) and counts validity from its own send.
          if (queuedSince + ttlMs / 2 < monotonicNow()) return undefined;
          return { granted: true, fence, sentAt: queuedSince };
        },
        cancel: () => this.#cancel(keys, owner),
        stopGraceMs: STOP_GRACE_MS,
        track: (cleanup) => this.#lifecycle.track(cleanup),
      });
      return await this.#lease(resource, keys, owner, grant, ttlMs);
    } finally {
      this.#wake.off(owner);
    }
  }

  async #lease(
    resource: string,
    keys: ResourceKeys,
    owner: string,
    grant: Grant,
    ttlMs: number,
  ): Promise<ManagedLease<bigint>> {
    if (grant.fence === null) {
      await this.#cancel(keys, owner);
      throw new BackendUnavailableError(this.backend, `grant on "${resource}" came without a fence`);
    }
    if (this.#replicas !== undefined) await this.#awaitReplicas(resource, keys, owner);
    if (grant.sentAt + ttlMs <= monotonicNow()) {
      // The answer came back after the TTL counted from its request had run out: the server may
      // already have let someone else in, so this grant must not be handed out.
      await this.#cancel(keys, owner);
      throw new LockLostError(resource, 'the grant had expired by the time its answer arrived');
    }
    return this.#newLease(resource, keys, owner, BigInt(grant.fence), grant.sentAt, ttlMs);
  }

  #newLease(
    resource: string,
    keys: ResourceKeys,
    owner: string,
    fence: bigint,
    sentAt: number,
    ttlMs: number,
  ): ManagedLease<bigint> {
    const operations = new RedisLeaseOperations(this.backend, this.#node, resource, keys, owner);
    const lease = new ManagedLease<bigint>({
      resource,
      owner,
      fence,
      sentAt,
      ttlMs,
      operations,
      onEnd: this.#forgetLease,
      lazyExpiry: true,
    });
    operations.lease = lease;
    this.#lifecycle.hold(lease);
    return lease;
  }

  async #awaitReplicas(resource: string, keys: ResourceKeys, owner: string): Promise<void> {
    const { count, timeoutMs } = this.#replicas as { count: number; timeoutMs: number };
    let acknowledged: number;
    try {
      acknowledged = await waitForReplicasOf(this.#connection.redis, keys.lock, count, timeoutMs);
    } catch (error) {
      acknowledged = -1;
      await this.#cancel(keys, owner);
      throw this.#acquireFailure(resource, error);
    }
    if (acknowledged < count) {
      await this.#cancel(keys, owner);
      throw new BackendUnavailableError(
        this.backend,
        `only ${acknowledged} of ${count} replicas acknowledged the grant on "${resource}" within ${timeoutMs} ms`,
      );
    }
  }

  /** Leaves the queue and gives back a grant that may have raced with a failure or a stop. */
  async #cancel(keys: ResourceKeys, owner: string): Promise<void> {
    await settleWithin(this.#node.release(keys, owner), CANCEL_TIMEOUT_MS);
  }

  #keysOf(resource: string): ResourceKeys {
    let keys = this.#keys.get(resource);
    if (keys === undefined) {
      // Bounded: a caller cycling through many resources starts over rather than growing it.
      if (this.#keys.size >= KEY_CACHE_SIZE) this.#keys.clear();
      keys = resourceKeys(this.#prefix, resource);
      this.#keys.set(resource, keys);
    }
    return keys;
  }

  /**
   * An acquire that failed without an answer: unknown outcome, unless the connection never came up
   * (a wrong TLS setting, host or port), when nothing was sent and the error says why.
   */
  #acquireFailure(
    resource: string,
    error: unknown,
    mark?: ConnectionMark,
  ): BackendUnavailableError | IndeterminateError {
    const { redis, name } = this.#connection;
    const notSent = neverConnectedReason(redis, name) ?? notSentReason(redis, name, mark);
    return classifyFailure(this.backend, resource, 'acquire', error, notSent);
  }

  #freeConnections(): Promise<void> {
    return closeLockConnection(this.#opened);
  }
}
