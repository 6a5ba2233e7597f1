import {
  type AcquireOptions,
  abortedPromise,
  assertPositiveMs,
  assertResource,
  assertSignal,
  assertTtlMs,
  ClientLifecycle,
  fullJitterDelay,
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
import {
  assertSingleNodeConnection,
  closeConnection,
  DEFAULT_KEY_PREFIX,
  duplicateConnection,
  LockNode,
  newOwnerToken,
  type OpenedConnection,
  openConnection,
  type RedisConnection,
  type ResourceKeys,
  resourceKeys,
  STOP_GRACE_MS,
  trackConnectionState,
  Waiter,
  WakeSubscriber,
  waitForGrant,
  wakeChannel,
} from '@fencekit/redis/internal';
import { RELEASE_STRAGGLERS_MS } from './bounds.js';
import { Quorum } from './quorum.js';
import { QuorumWake } from './quorum-wake.js';
import { driftFor } from './timing.js';

/** What one of Redlock's nodes may be: one independent Redis master, never a Cluster. */
const NODE_ACCEPTED =
  'one independent Redis master: an ioredis Redis instance (not a Cluster), ioredis connection options or a redis:// URL';

export interface RedlockClientOptions {
  /** The independent masters: ioredis instances (left open by `close()`), options or URLs. */
  nodes: readonly RedisConnection[];
  /** Prefix of every key written on the nodes; default "fencekit:". */
  keyPrefix?: string;
  /** Drift allowance = ttl × driftFactor + driftConstantMs (defaults 0.01 and 2 ms). */
  driftFactor?: number;
  driftConstantMs?: number;
  /** Per-node timeout for one request; default ttl / 20 within [5, 100] ms. Must be ≪ the TTL. */
  nodeTimeoutMs?: number;
  /** Full-jitter retry after a failed quorum: base and cap of the delay (defaults 10 and 250 ms). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How long a waiter's queue entry lives without a heartbeat; default 3 000 ms. */
  waiterTtlMs?: number;
  /**
   * Fairness with a bound: on each node the first waiter in line has precedence when the lock is
   * free, but only for this long; after that any waiting client may be granted there. A live waiter
   * that cannot win a quorum (cut off from the majority of nodes) thus cannot keep the lock from a
   * waiter that can. Default: 3 per-node timeouts.
   */
  headGraceMs?: number;
}

type Grant = { sentAt: number };

/** How long to wait for every node to connect before the first request. */
const CONNECT_TIMEOUT_MS = 2_000;
/** How long a resource counts as contended after an acquire of it had to wait, and how many are remembered. */
const CONTENDED_HINT_MS = 1_000;
const CONTENDED_HINTS = 1_024;
/** How long after the first node announced a release to wait for a quorum of them. */
const WAKE_GRACE_MS = 3;

/**
 * Redlock over N independent Redis masters: the same owner token is set on every node at once, and
 * the lock is held when a majority (⌊N/2⌋ + 1) granted it with validity left after subtracting the
 * time the attempt took and the clock drift allowance. A failed attempt is given back on every node.
 *
 * It has no fence (`LockClient<undefined>`): no counter on a quorum of independent nodes is strictly
 * increasing across holders when nodes restart or clocks jump. See the README.
 *
 * Waiters queue on every node with one ticket agreed across them (the highest number the nodes
 * offered), so they are granted in the same order everywhere (FIFO), and are woken by pub/sub on
 * release rather than by polling.
 */
export class RedlockClient implements LockClient<undefined> {
  readonly backend = 'redlock';
  readonly capabilities: LockCapabilities = { safeFences: false, fair: true, faultTolerant: true };
  readonly quorum: number;
  readonly #connections: OpenedConnection[];
  readonly #quorum: Quorum;
  readonly #subscribers: WakeSubscriber[];
  /** Removes the error tracking from the connections (the caller's own ones outlive the client). */
  readonly #untrackErrors: (() => void)[];
  readonly #prefix: string;
  readonly #drift: (ttlMs: number) => number;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #waiterTtlMs: number;
  readonly #lifecycle = new ClientLifecycle<ManagedLease<undefined>>('RedlockClient');
  /**
   * Resources whose last acquire here had to wait, until when (monotonic ms). Their next first round
   * skips the fast-path script: under contention it would only add a round before the full script.
   */
  readonly #contended = new Map<string, number>();
  #connected: Promise<void> | undefined;
  /**
   * Aborted once close() has closed the connections: a released lease's slowest nodes are waited
   * for no longer then (on the connections fencekit opened they have failed by then; on a caller's
   * own instance their requests go on, the caller's to close), so close() neither leaves that
   * wait's timer behind nor waits past its bound for it. A signal, not a promise: each wait removes
   * its listener, where a reaction on a promise would stay until close().
   */
  readonly #connectionsClosed = new AbortController();

  constructor(options: RedlockClientOptions) {
    if (typeof options !== 'object' || options === null || !Array.isArray(options.nodes)) {
      throw new InvalidArgumentError('options', options, 'an object with a nodes array');
    }
    if (options.nodes.length === 0) {
      throw new InvalidArgumentError('nodes', options.nodes, 'at least one Redis node');
    }
    this.#prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.#drift = driftFor(options.driftFactor ?? 0.01, options.driftConstantMs ?? 2);
    if (options.nodeTimeoutMs !== undefined) assertPositiveMs('nodeTimeoutMs', options.nodeTimeoutMs);
    this.#retryBaseMs = options.retryBaseMs ?? 10;
    this.#retryMaxMs = options.retryMaxMs ?? 250;
    assertPositiveMs('retryBaseMs', this.#retryBaseMs);
    assertPositiveMs('retryMaxMs', this.#retryMaxMs);
    this.#waiterTtlMs = options.waiterTtlMs ?? 3_000;
    assertTtlMs('waiterTtlMs', this.#waiterTtlMs);
    if (options.headGraceMs !== undefined) assertPositiveMs('headGraceMs', options.headGraceMs);
    // Each node is one independent master: an ioredis Cluster (or any other client) is refused
    // before a connection is opened, rather than taken for options of a connection to localhost.
    options.nodes.forEach((node, i) => {
      assertSingleNodeConnection(node, `nodes[${i}]`, NODE_ACCEPTED);
    });
    // A down node must fail its part at once, not queue commands until it returns.
    this.#connections = options.nodes.map((node, i) =>
      // Every request already has its own per-node timeout (fanOut), so no per-command timer.
      openConnection(
        node,
        { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: undefined },
        `nodes[${i}]`,
        NODE_ACCEPTED,
      ),
    );
    this.#untrackErrors = this.#connections.map((c) => trackConnectionState(c.redis));
    const channel = wakeChannel(this.#prefix, newOwnerToken());
    this.#quorum = new Quorum({
      nodes: this.#connections.map((c) => new LockNode(c.name, c.redis)),
      channel,
      waiterTtlMs: this.#waiterTtlMs,
      drift: this.#drift,
      nodeTimeoutMs: options.nodeTimeoutMs,
      headGraceMs: options.headGraceMs,
    });
    this.quorum = this.#quorum.size;
    this.#subscribers = this.#connections.map(
      (c) => new WakeSubscriber(channel, () => duplicateConnection(c.redis)),
    );
  }

  /** "host:port" of each node, in the order given. */
  get nodeNames(): string[] {
    return this.#quorum.settings.nodes.map((n) => n.name);
  }

  async tryAcquire(resource: string, options: TryAcquireOptions): Promise<ManagedLease<undefined> | null> {
    this.#lifecycle.assertOpen();
    assertResource(resource);
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', options, 'an object with ttlMs');
    }
    assertTtlMs('ttlMs', options.ttlMs);
    this.#assertTtlAboveDrift(options.ttlMs);
    assertSignal('signal', options.signal);
    if (options.signal?.aborted) throw new LockAbortedError(resource, { cause: options.signal.reason });
    return this.#lifecycle.track(this.#tryAcquire(resource, options.ttlMs));
  }

  async acquire(resource: string, options: AcquireOptions): Promise<ManagedLease<undefined>> {
    this.#lifecycle.assertOpen();
    const request = normalizeAcquire(resource, options);
    this.#assertTtlAboveDrift(request.ttlMs);
    if (request.signal?.aborted) {
      throw new LockAbortedError(request.resource, { cause: request.signal.reason });
    }
    if (request.waitMs === 0) {
      const lease = await this.#lifecycle.track(this.#tryAcquire(request.resource, request.ttlMs));
      if (lease === null) throw new LockTimeoutError(request.resource, 0);
      return lease;
    }
    return this.#lifecycle.track(this.#acquire(request));
  }

  close(): Promise<void> {
    return this.#lifecycle.close(() => this.#freeConnections());
  }

  async #tryAcquire(resource: string, ttlMs: number): Promise<ManagedLease<undefined> | null> {
    await this.#connect();
    const keys = resourceKeys(this.#prefix, resource);
    const owner = newOwnerToken();
    const result = await this.#quorum.round(keys, resource, owner, ttlMs, 'try', '', true);
    if (result.granted) return this.#lease(resource, keys, owner, result, ttlMs);
    if (result.error !== undefined) throw result.error;
    return null;
  }

  async #acquire(request: {
    resource: string;
    ttlMs: number;
    waitMs: number;
    signal: AbortSignal | undefined;
  }): Promise<ManagedLease<undefined>> {
    await this.#connect();
    const startedAt = monotonicNow();
    const { resource, ttlMs } = request;
    const keys = resourceKeys(this.#prefix, resource);
    const owner = newOwnerToken();
    // Round one queues nowhere: it is granted when the lock is free and nobody waits, and
    // otherwise may learn a ticket (not when the fast path alone refused it: the first attempt
    // below then learns one). No waiter needs setting up before it.
    const first = await this.#quorum.round(
      keys,
      resource,
      owner,
      ttlMs,
      'wait',
      '',
      this.#uncontended(resource),
    );
    if (first.granted) this.#contended.delete(resource);
    else this.#markContended(resource);
    if (first.granted) {
      if (!request.signal?.aborted && !this.#lifecycle.closing.aborted) {
        return this.#lease(resource, keys, owner, first, ttlMs);
      }
      await this.#quorum.giveBack(keys, owner, ttlMs, undefined);
      this.#lifecycle.assertOpen();
      throw new LockAbortedError(resource, { cause: request.signal?.reason });
    }
    // Queue everywhere with the highest ticket the nodes offered.
    let ticket = first.ticket > 0 ? String(first.ticket) : '';
    let failures = 0;
    // Wake-ups from any node will do: nodes that cannot subscribe leave their waiters to the timer.
    // Bounded like any request to a node: a node cut off from us (its SUBSCRIBE hanging) must not
    // keep the waiter from queueing on the nodes it does reach.
    const subscribing = this.#subscribers.map((s) => s.ready()).filter((p) => p !== undefined);
    if (subscribing.length > 0) {
      await settleWithin(
        Promise.all(subscribing.map((p) => p.catch(() => undefined))),
        this.#quorum.nodeTimeoutFor(ttlMs),
      );
    }
    const waiter = new Waiter();
    const wake = new QuorumWake(waiter, this.quorum, WAKE_GRACE_MS);
    for (const [i, s] of this.#subscribers.entries()) s.on(owner, wake.from(i));
    // Each attempt tags its queue entries with a new generation, so a release may grant the lock to
    // us directly on each node. A grant on a node happens after our attempt's request reached it, so
    // the validity of a quorum of them counts from the moment that attempt was sent.
    let generation = 0;
    let generationSentAt = 0;
    try {
      const grant = await waitForGrant<Grant>({
        resource,
        startedAt,
        waitMs: request.waitMs,
        signal: request.signal,
        closing: this.#lifecycle.closing,
        clientName: 'RedlockClient',
        heartbeatMs: this.#waiterTtlMs / 3,
        // Two rounds and two give-backs, each bounded by the per-node timeout, and some slack.
        attemptBoundMs: 4 * this.#quorum.nodeTimeoutFor(ttlMs) + 1_000,
        waiter,
        attempt: async () => {
          generation += 1;
          const tag = String(generation);
          generationSentAt = monotonicNow();
          wake.expect(tag);
          let result = await this.#quorum.round(keys, resource, owner, ttlMs, 'wait', ticket, false, tag);
          if (!result.granted && ticket === '' && result.ticket > 0) {
            ticket = String(result.ticket);
            result = await this.#quorum.round(keys, resource, owner, ttlMs, 'wait', ticket, false, tag);
          }
          if (result.granted) return { grant: result };
          // What was granted on this generation's entries may have been given back with the round's
          // partial grants: none of it counts any more.
          if (result.gaveBack) wake.expect('');
          if (result.error === undefined) {
            failures = 0;
            return { retryMs: result.retryMs + 1 };
          }
          failures += 1;
          return {
            // Core's full jitter; a cap below the base caps every delay (a base above it changes nothing).
            retryMs: fullJitterDelay(failures, {
              baseMs: Math.min(this.#retryBaseMs, this.#retryMaxMs),
              capMs: this.#retryMaxMs,
            }),
            error: result.error,
          };
        },
        // Only while at least half the TTL is left: validity counts from the attempt's send, which can
        // be a heartbeat ago; otherwise the next attempt re-arms the handed nodes from its own send.
        handedOver: () =>
          wake.handedQuorum && generationSentAt + ttlMs / 2 > monotonicNow()
            ? { sentAt: generationSentAt }
            : undefined,
        cancel: () => this.#quorum.giveBack(keys, owner, ttlMs, undefined),
        stopGraceMs: STOP_GRACE_MS,
        track: (cleanup) => this.#lifecycle.track(cleanup),
      });
      return await this.#lease(resource, keys, owner, grant, ttlMs);
    } finally {
      wake.dispose();
      for (const s of this.#subscribers) s.off(owner);
    }
  }

  async #lease(
    resource: string,
    keys: ResourceKeys,
    owner: string,
    grant: Grant,
    ttlMs: number,
  ): Promise<ManagedLease<undefined>> {
    if (grant.sentAt + ttlMs - this.#drift(ttlMs) <= monotonicNow()) {
      // Validity ran out between the quorum and here (a stalled process): never hand it out.
      await this.#quorum.giveBack(keys, owner, ttlMs, undefined);
      throw new LockLostError(resource, 'the grant had expired by the time its answer arrived');
    }
    const lease: ManagedLease<undefined> = new ManagedLease<undefined>({
      resource,
      owner,
      fence: undefined,
      sentAt: grant.sentAt,
      ttlMs,
      driftMs: this.#drift,
      operations: {
        extend: (extendTtlMs) => this.#quorum.extend(keys, resource, owner, extendTtlMs),
        // The slowest nodes' releases finish after the lease is released; close() waits for them.
        release: () =>
          this.#quorum.release(keys, resource, owner, ttlMs, (all) => {
            // Bounded: a node cut off with its socket still open would never answer (no command
            // timeout). Tracked even when close() is what released the lease: close() waits for
            // tracked work again once the connections are closed, which ends this wait.
            this.#lifecycle.track(this.#stragglers(all));
          }),
      },
      onEnd: () => this.#lifecycle.forget(lease),
      lazyExpiry: true,
    });
    this.#lifecycle.hold(lease);
    return lease;
  }

  #uncontended(resource: string): boolean {
    const until = this.#contended.get(resource);
    return until === undefined || until < monotonicNow();
  }

  #markContended(resource: string): void {
    // A hint only (it picks which script goes first), so a bounded map that is simply cleared.
    if (this.#contended.size >= CONTENDED_HINTS) this.#contended.clear();
    this.#contended.set(resource, monotonicNow() + CONTENDED_HINT_MS);
  }

  /** Waits (once, bounded) for the nodes to connect, since requests to a down node fail at once. */
  #connect(): Promise<void> {
    this.#connected ??= Promise.all(this.#connections.map((c) => untilReady(c, CONNECT_TIMEOUT_MS))).then(
      () => undefined,
    );
    return this.#connected;
  }

  /** A TTL no longer than its drift allowance could never give a valid lease. */
  #assertTtlAboveDrift(ttlMs: number): void {
    if (ttlMs <= this.#drift(ttlMs)) {
      throw new InvalidArgumentError(
        'ttlMs',
        ttlMs,
        `more than the clock drift allowance (${this.#drift(ttlMs).toFixed(2)} ms for this TTL)`,
      );
    }
  }

  async #freeConnections(): Promise<void> {
    for (const untrack of this.#untrackErrors) untrack();
    // All side by side, each bounded by QUIT_TIMEOUT_MS: a hung node costs close() that bound once.
    await Promise.all([
      ...this.#subscribers.map((s) => s.close()),
      ...this.#connections.filter((c) => c.owned).map((c) => closeConnection(c.redis)),
    ]);
    this.#connectionsClosed.abort();
  }

  /** Waits for a released lease's slowest nodes, until `RELEASE_STRAGGLERS_MS` or close() freed the connections. */
  async #stragglers(all: Promise<void>): Promise<void> {
    const closed = abortedPromise(this.#connectionsClosed.signal);
    try {
      await settleWithin(Promise.race([all, closed.promise]), RELEASE_STRAGGLERS_MS);
    } finally {
      closed.dispose();
    }
  }
}

function untilReady(connection: OpenedConnection, timeoutMs: number): Promise<void> {
  const { redis } = connection;
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.on('ready', done);
  });
}
