import {
  type AcquireOptions,
  assertPositiveMs,
  assertResource,
  assertSignal,
  assertTtlMs,
  BackendUnavailableError,
  ClientClosedError,
  DEFAULT_WAIT_MS,
  freshLease,
  type GrantedLease,
  IndeterminateError,
  InvalidArgumentError,
  isFencekitError,
  LockAbortedError,
  type LockCapabilities,
  type LockClient,
  LockLostError,
  LockTimeoutError,
  ManagedLease,
  monotonicNow,
  NotLockHolderError,
  normalizeAcquire,
  sleep,
  type TryAcquireOptions,
} from '@fencekit/core';
import type { Stat } from 'node-zookeeper-client';
import { BackgroundWork } from './background.js';
import { type ConnectOptions, openSession } from './connect.js';
import { type GuardedWriteOptions, guardedWrite } from './guarded-write.js';
import { queueOrder, segmentFor } from './paths.js';
import { EntryGoneError, type QueueEntry, SequentialQueue } from './queue.js';
import type { ZkSession } from './session.js';
import { UnsureNodes } from './unsure.js';
import { RETRY_PAUSE_MS, WaitScopes } from './wait-scope.js';
import { isUncertain, ZkCallError, ZkCode, zkCode } from './zk-errors.js';

/**
 * `LockLostError.reason` when the connection is suspended, or the session's last answer no longer
 * vouches for it (`ZkSession.aliveUntil`): the lock may still be ours, or not.
 */
export const UNSURE = 'unsure';

/** A lease on a ZooKeeper lock: `node` is the lock's znode, `fence` its czxid. */
export class ZkLease extends ManagedLease<bigint> {
  constructor(
    grant: GrantedLease<bigint>,
    /** The ephemeral-sequential znode that is this grant. */
    readonly node: string,
    /** The ZooKeeper session generation that owns `node`. */
    readonly generation: number,
  ) {
    super(grant);
  }
}

interface Held {
  readonly lease: ZkLease;
  readonly entry: QueueEntry;
}

/** What one grant (one lease) may still do with its lock node. */
interface GrantState {
  /** Its holder gave it up (release or close): nothing more to delete. */
  released: boolean;
  /**
   * It was passed to `reclaim`, which hands the same node to a new lease: from then on the node is the
   * new lease's, and this one must never delete it.
   */
  superseded: boolean;
}

/**
 * Curator-style mutex on ZooKeeper. Semantics: fair (FIFO by arrival), not re-entrant, fenced.
 *
 * - A lock is an ephemeral-sequential znode under `<root>/locks/<resource>/`; the lowest holds it and
 *   every other waiter watches only its predecessor, so a release wakes one waiter (no herd).
 * - Fence = the lock node's czxid: ZooKeeper's global transaction id, strictly increasing across holders.
 * - Lifetime: the node lives as long as the client's ZooKeeper session. A holder that dies loses the
 *   lock when its session expires (`sessionTimeoutMs`, the TTL for dead holders). A live holder's
 *   lease is valid for `ttlMs` locally, and never past what the session's last answer vouches for
 *   (`ZkSession.aliveUntil`, read when `held` or `validUntil` is): a holder that stalled longer than
 *   that reads its lease "unsure" on its first line after the stall. `extend` checks that the node
 *   still exists and re-arms the window (it writes nothing: the session heartbeat is what keeps the
 *   node). A lease whose window runs out without extension is given up: its node is deleted so the
 *   next waiter proceeds.
 * - Connection suspended → every lease's signal aborts at once with reason "unsure": a lease is never
 *   reported held while the connection is suspended. Its node is kept (Curator does the same): if the
 *   same session reconnects, `reclaim(lease)` hands back a fresh lease on the very same node and
 *   fence; `release()` gives it up; unclaimed, it is deleted one session timeout after the reconnect.
 *   Once reclaimed, the old lease never touches the node again (its release throws
 *   `NotLockHolderError`). Session expired → lost, and the node is gone.
 */
export class ZkLockClient implements LockClient<bigint> {
  readonly backend = 'zookeeper';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: true };
  readonly session: ZkSession;
  readonly #ownsSession: boolean;
  readonly #root: string;
  readonly #queue: SequentialQueue;
  readonly #held = new Map<string, Held>();
  readonly #grants = new WeakMap<ZkLease, GrantState>();
  readonly #scopes = new WaitScopes();
  readonly #offSession: () => void;
  readonly #unsure: UnsureNodes;
  #closed = false;
  /** Background deletes (`#abandon`) still running; close() waits for them. */
  readonly #abandons = new BackgroundWork();

  constructor(options: ConnectOptions) {
    const { session, owned, root } = openSession(options);
    this.session = session;
    this.#ownsSession = owned;
    this.#root = root;
    this.#queue = new SequentialQueue(session, 'lock', this.#abandons);
    this.#unsure = new UnsureNodes(
      () => session.sessionTimeoutMs,
      (entry) => this.#abandon(entry),
    );
    this.#offSession = session.on((event, generation) => {
      if (event === 'suspended') {
        const cause = new Error(
          'connection to ZooKeeper suspended: the session may or may not still hold the lock',
        );
        for (const held of [...this.#held.values()]) {
          this.#unsure.add(held.entry);
          held.lease.markLost(UNSURE, cause);
        }
      } else if (event === 'reconnected') {
        this.#unsure.reconnected(generation);
      } else if (event === 'expired') {
        // Expired here may be expired only here (suspended for a session timeout): the servers may
        // still keep the session and the nodes, so they are withdrawn through the next session.
        for (const entry of this.#unsure.expired(generation)) this.#abandon(entry);
        for (const held of [...this.#held.values()]) {
          if (held.entry.generation === generation) held.lease.markLost('ZooKeeper session expired');
        }
      }
    });
  }

  /**
   * After a suspension: a new lease on the same lock node and fence if the same session came back and
   * the node is still there (nobody else can have held the lock meanwhile). Throws `LockLostError`
   * otherwise: the session expired, the node is gone, the lease did not end unsure, or it was already
   * reclaimed. From the call on, `lease` can no longer touch the node: its `release()` throws
   * `NotLockHolderError` (and `await using` on it ends quietly).
   */
  async reclaim(
    lease: ZkLease,
    options: { ttlMs: number; waitMs?: number; signal?: AbortSignal },
  ): Promise<ZkLease> {
    if (!(lease instanceof ZkLease))
      throw new InvalidArgumentError('lease', lease, 'a ZkLease from this client');
    assertTtlMs('ttlMs', options?.ttlMs);
    const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
    assertPositiveMs('waitMs', waitMs);
    assertSignal('signal', options.signal);
    this.#assertOpen();
    const state = this.#grants.get(lease);
    if (!state) throw new InvalidArgumentError('lease', lease, 'a ZkLease from this client');
    if (state.superseded) throw new LockLostError(lease.resource, 'this lease was already reclaimed');
    const entry = this.#unsure.take(lease.node);
    if (!entry) throw new LockLostError(lease.resource, 'only a lease that ended unsure can be reclaimed');
    // The node passes to the new lease now, before any await: a release of the old one racing this
    // reclaim must not delete it under the new lease.
    state.superseded = true;
    // A ZooKeeper leader election can take several seconds: wait for the same session up to waitMs
    // (or until close(), which ends every open wait of this client).
    const scope = this.#scopes.open(waitMs, options.signal);
    try {
      for (;;) {
        while (!this.session.connected && this.session.generation === entry.generation) {
          // A closed session never connects again: waiting on it would spin (ready() refuses at once).
          if (this.session.closed) throw new ClientClosedError('ZkLockClient');
          await this.session.ready({ signal: scope.signal }).catch((error: unknown) => {
            if (scope.signal.aborted) throw error;
          });
        }
        if (this.session.generation !== entry.generation) {
          throw new LockLostError(lease.resource, 'ZooKeeper session expired');
        }
        let stat: Stat | null;
        try {
          stat = await this.session.exists(entry.path, undefined, { signal: scope.signal });
        } catch (error) {
          // The connection dropped under the check (a reclaim right after a stall meets the
          // suspension that the stall brings): the session may well be back in a moment.
          if (!isUncertain(error) || scope.signal.aborted) throw error;
          await sleep(RETRY_PAUSE_MS, scope.signal);
          continue;
        }
        if (!stat) throw new LockLostError(lease.resource, `lock node ${entry.path} is gone`);
        const reclaimed = this.#grant(lease.resource, entry, lease.fence, options.ttlMs);
        if (reclaimed) return await freshLease(reclaimed);
        // Suspended again between the answer and now: wait for the session once more.
      }
    } catch (error) {
      if (!this.#held.has(entry.path)) this.#abandon(entry);
      throw this.#translate(error, lease.resource, waitMs, options.signal, scope.timedOut);
    } finally {
      scope.dispose();
    }
  }

  /** The folder that holds the queue of one resource. */
  folderOf(resource: string): string {
    return `${this.#root}/locks/${segmentFor(resource)}`;
  }

  async acquire(resource: string, options: AcquireOptions): Promise<ZkLease> {
    const { ttlMs, waitMs, signal } = normalizeAcquire(resource, options);
    this.#assertOpen();
    const scope = this.#scopes.open(waitMs, signal);
    try {
      for (;;) {
        let entry: QueueEntry | undefined;
        try {
          const joined = await this.#queue.join(this.folderOf(resource), null, scope.signal);
          entry = joined.entry;
          // Alone in the folder, awaitHead answers at once with the fence from the create's own reply.
          const { czxid } = await this.#queue.awaitHead(entry, joined, scope.signal);
          const lease = this.#grant(resource, entry, czxid, ttlMs);
          if (lease) return await freshLease(lease);
          // Head while suspended: not reportable. Wait for the connection and look again.
          await this.session.ready({ signal: scope.signal, timeoutMs: Number.POSITIVE_INFINITY });
          const again = await this.#queue.awaitHead(entry, { entry, order: [] }, scope.signal);
          const retried = this.#grant(resource, entry, again.czxid, ttlMs);
          if (retried) return await freshLease(retried);
          throw new EntryGoneError(entry, 'connection suspended at the grant');
        } catch (error) {
          if (entry) this.#abandon(entry);
          if (error instanceof EntryGoneError && !scope.signal.aborted) continue;
          throw error;
        }
      }
    } catch (error) {
      throw this.#translate(error, resource, waitMs, signal, scope.timedOut);
    } finally {
      scope.dispose();
    }
  }

  async tryAcquire(resource: string, options: TryAcquireOptions): Promise<ZkLease | null> {
    assertResource(resource);
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', options, 'an object with ttlMs');
    }
    assertTtlMs('ttlMs', options.ttlMs);
    assertSignal('signal', options.signal);
    this.#assertOpen();
    const { signal, ttlMs } = options;
    // One attempt still needs a bound: a suspended connection must not hold the caller forever.
    const boundMs = this.session.sessionTimeoutMs;
    const scope = this.#scopes.open(boundMs, signal);
    let entry: QueueEntry | undefined;
    try {
      const joined = await this.#queue.join(this.folderOf(resource), null, scope.signal);
      entry = joined.entry;
      let order = joined.order;
      if (order.length === 0) {
        order = queueOrder(
          (await this.session.children(entry.folder, undefined, { signal: scope.signal })).children,
        );
      }
      if (order[0] !== entry.name) {
        this.#abandon(entry);
        return null;
      }
      const head = await this.#queue.awaitHead(entry, { entry, order }, scope.signal);
      const lease = this.#grant(resource, entry, head.czxid, ttlMs);
      if (!lease) {
        this.#abandon(entry);
        throw new BackendUnavailableError('zookeeper', 'connection suspended while trying the lock');
      }
      return await freshLease(lease);
    } catch (error) {
      if (entry && !this.#held.has(entry.path)) this.#abandon(entry);
      throw this.#translate(error, resource, boundMs, signal, scope.timedOut);
    } finally {
      scope.dispose();
    }
  }

  /**
   * Writes `data` to the znode `path` only while `lease`'s lock node still exists, in one `multi`
   * (check lock node + set data): ZooKeeper itself refuses a holder that has lost the lock, whatever
   * that holder believes. Throws `GuardedWriteRefusedError` (code "stale-fence") when refused.
   */
  async guardedWrite(
    lease: ZkLease,
    path: string,
    data: Buffer,
    options: GuardedWriteOptions = {},
  ): Promise<void> {
    if (!(lease instanceof ZkLease))
      throw new InvalidArgumentError('lease', lease, 'a ZkLease from this client');
    this.#assertOpen();
    return guardedWrite(this.session, lease, path, data, options);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#scopes.abortAll(new ClientClosedError('ZkLockClient'));
    await Promise.allSettled([
      ...[...this.#held.values()].map((held) => held.lease.release()),
      ...this.#unsure.drain().map((entry) => this.#queue.leave(entry)),
    ]);
    this.#offSession();
    // Background deletes end no later than close(): an owned session's close ends them at once; on a
    // shared session they get one session timeout to finish, then stop (the nodes then go with it).
    if (this.#ownsSession) await this.session.close();
    await this.#abandons.finish(this.session.sessionTimeoutMs);
  }

  #grant(resource: string, entry: QueueEntry, fence: bigint, ttlMs: number): ZkLease | undefined {
    // Checked in the same tick as the lease is registered: a suspension after this marks it lost. A
    // session the ensemble may already have expired (no answer to a request sent within its vouched
    // span, e.g. after a stall) grants nothing either.
    if (!this.#vouchedFor(entry)) return undefined;
    const state: GrantState = { released: false, superseded: false };
    const lease = new ZkLease(
      {
        resource,
        owner: entry.owner,
        fence,
        // The local window starts when we learn the node is the head. Nothing on the server expires on
        // this clock (the node lives as long as the session, whose loss aborts the lease at once), so
        // time the request spent in flight need not be taken off it.
        sentAt: monotonicNow(),
        ttlMs,
        // …but the node lives only as long as the session, which the ensemble may expire while this
        // process is stalled: validity never outlasts what the session's last answer vouches for.
        validityCap: { until: () => this.session.aliveUntil(entry.generation), reason: UNSURE },
        operations: {
          extend: async (_ttlMs, options) => {
            if (this.session.generation !== entry.generation) {
              throw new LockLostError(resource, 'ZooKeeper session expired');
            }
            let exists: boolean;
            try {
              exists =
                (await this.session.exists(entry.path, undefined, { signal: options.signal })) !== null;
            } catch (error) {
              throw new IndeterminateError(resource, 'extend', { cause: error });
            }
            if (!exists || this.session.generation !== entry.generation) {
              throw new LockLostError(resource, `lock node ${entry.path} no longer exists`);
            }
          },
          release: async () => {
            if (state.superseded) {
              throw new NotLockHolderError(resource, entry.owner, {
                cause: new Error(`lease reclaimed: lock node ${entry.path} belongs to the reclaimed lease`),
              });
            }
            state.released = true;
            this.#unsure.take(entry.path);
            let removed: boolean;
            try {
              removed = await this.#queue.leave(entry);
            } catch (error) {
              this.#abandon(entry);
              throw new IndeterminateError(resource, 'release', { cause: error });
            }
            if (!removed && this.session.givenUp(entry.generation)) {
              // Not "gone": this client gave the session up during an outage, the servers may keep it.
              this.#abandon(entry);
              throw new IndeterminateError(resource, 'release', {
                cause: new Error(
                  `session of ${entry.path} given up unanswered: withdrawing it in the background`,
                ),
              });
            }
            if (!removed) await this.#assertNobodyElseHolds(resource, entry);
          },
        },
        onEnd: (ended) => {
          if (this.#held.get(entry.path)?.lease === ended) this.#held.delete(entry.path);
          if (state.released || state.superseded || this.#unsure.has(entry.path)) return;
          // Past the session's vouched span (a stall, answers late): unsure, as a suspension is. The
          // node is kept for a reclaim (see UnsureNodes), its grace counted from now if connected.
          if ((ended.signal.reason as LockLostError | undefined)?.reason === UNSURE) {
            this.#unsure.add(entry, this.#connectedFor(entry));
            return;
          }
          // Lost or past its window without extension: give the node up for the next waiter.
          this.#abandon(entry);
        },
      },
      entry.path,
      entry.generation,
    );
    this.#held.set(entry.path, { lease, entry });
    this.#grants.set(lease, state);
    return lease;
  }

  #connectedFor(entry: QueueEntry): boolean {
    return this.session.connected && this.session.generation === entry.generation;
  }

  /** Connected, and the session's last answer still vouches for it (see `ZkSession.aliveUntil`). */
  #vouchedFor(entry: QueueEntry): boolean {
    return this.#connectedFor(entry) && monotonicNow() < this.session.aliveUntil(entry.generation);
  }

  /**
   * Our node was already gone at release: fine if the lock is free, but a stale holder must learn that
   * someone else holds it now (Curator: "You do not own the lock").
   */
  async #assertNobodyElseHolds(resource: string, entry: QueueEntry): Promise<void> {
    let order: string[];
    try {
      order = queueOrder((await this.session.children(entry.folder)).children);
    } catch (error) {
      if (zkCode(error) === ZkCode.NO_NODE) return;
      throw new IndeterminateError(resource, 'release', { cause: error });
    }
    if (order.length > 0) throw new NotLockHolderError(resource, entry.owner);
  }

  /**
   * Deletes an entry we no longer want, in the background, until it is deleted or gone, whatever
   * session the client has by then (`SequentialQueue.withdraw`; close() bounds these).
   */
  #abandon(entry: QueueEntry): void {
    this.#abandons.start(this.#queue.withdraw(entry, this.#abandons.signal), () => {
      // Refused outright (not a lost answer): the session is closing or closed, and the node with it.
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError('ZkLockClient');
  }

  #translate(
    error: unknown,
    resource: string,
    waitMs: number,
    signal: AbortSignal | undefined,
    timedOut: boolean,
  ): unknown {
    if (isFencekitError(error)) return error;
    if (this.#closed) return new ClientClosedError('ZkLockClient');
    if (timedOut) return new LockTimeoutError(resource, waitMs, { cause: error });
    if (signal?.aborted) return new LockAbortedError(resource, { cause: signal.reason });
    if (error instanceof ZkCallError)
      return new BackendUnavailableError('zookeeper', error.message, { cause: error });
    return error;
  }
}
