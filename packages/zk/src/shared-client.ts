import {
  type AcquireOptions,
  assertResource,
  BackendUnavailableError,
  ClientClosedError,
  freshLease,
  isFencekitError,
  LockAbortedError,
  type LockCapabilities,
  LockTimeoutError,
  type ManagedLease,
  ManagedReadWriteLease,
  ManagedSemaphoreLease,
  normalizeAcquire,
  normalizeSemaphore,
  normalizeSemaphoreAcquire,
  normalizeSemaphoreTryAcquire,
  normalizeTryAcquire,
  type ReadWriteLock,
  type ReadWriteLockClient,
  type ReadWriteMode,
  readWriteLockOf,
  type Semaphore,
  type SemaphoreClient,
  type SemaphoreOptions,
  type TryAcquireOptions,
} from '@fencekit/core';
import { type ConnectOptions, openSession } from './connect.js';
import { UNSURE } from './lock.js';
import { queueOrder, segmentFor } from './paths.js';
import { EntryGoneError, type QueueEntry, SequentialQueue } from './queue.js';
import { assertSameLimit, awaitSlot, fitsIn } from './semaphore-slots.js';
import type { ZkSession } from './session.js';
import { type MakeLease, SharedGrants } from './shared-grants.js';
import { isWriter, READ_KIND, semaphoreKind, WRITE_KIND } from './shared-nodes.js';
import { type Cancel, type WaitScope, WaitScopes } from './wait-scope.js';
import { ZkCallError } from './zk-errors.js';

/** How many queue kinds (semaphore sizes × requests) a client keeps a `SequentialQueue` for. */
const QUEUE_CACHE_SIZE = 256;

/**
 * Fenced, fair semaphores and read-write locks on ZooKeeper, after Curator's recipes, on the same
 * ephemeral-sequential queue engine as `ZkLockClient` (`SequentialQueue`).
 *
 * - Semaphore `name`: holders and waiters are one folder of ephemeral-sequential entries under
 *   `<root>/semaphores/<name>/slots/`, each naming the permits it asks for; an entry holds its permits
 *   once the entries before it and its own ask for at most `permits` (strict FIFO by construction: a
 *   large request is never passed by smaller ones behind it). Nothing is written at the grant: a
 *   waiter watches only the nearest entries that keep it out (`awaitSlot`), so a release wakes at most
 *   `permits` waiters and the grant costs the notification alone. Fence = the entry's czxid: entries
 *   are granted in sequence order, so fences follow grant order.
 * - Read-write lock `name` (InterProcessReadWriteLock): `read` and `write` entries in one queue under
 *   `<root>/rwlocks/<name>/`. A writer holds the lock when its entry is the lowest and watches its
 *   immediate predecessor; a reader holds it when no writer is queued before it and watches only the
 *   last such writer. Fence = the entry's czxid: a writer's is above every grant before it, a reader's
 *   above every writer before it.
 * - Lifetime as the mutex's: a node lives as long as the session (a dead holder's permits come back
 *   when its session expires); a lease is valid for `ttlMs` locally and never past what the session's
 *   last answer vouches for; a lapsed or lost lease's node is deleted for the next waiter. Unlike the
 *   mutex, a lease that ends unsure (connection suspended) is given up, not kept for a reclaim.
 */
export class ZkSharedLockClient implements SemaphoreClient<bigint>, ReadWriteLockClient<bigint> {
  readonly backend = 'zookeeper';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: true };
  readonly session: ZkSession;
  readonly #ownsSession: boolean;
  readonly #root: string;
  readonly #queues = new Map<string, SequentialQueue>();
  readonly #grants: SharedGrants;
  readonly #scopes = new WaitScopes();
  readonly #offSession: () => void;
  #closed = false;

  constructor(options: ConnectOptions) {
    const { session, owned, root } = openSession(options);
    this.session = session;
    this.#ownsSession = owned;
    this.#root = root;
    this.#grants = new SharedGrants(session);
    this.#offSession = session.on((event, generation) => {
      if (event === 'suspended') {
        const cause = new Error('connection to ZooKeeper suspended: the grant may or may not still stand');
        this.#grants.markLost(UNSURE, cause);
      } else if (event === 'expired') {
        this.#grants.markLost('ZooKeeper session expired', undefined, generation);
      }
    });
  }

  semaphore(name: string, options: SemaphoreOptions): Semaphore<bigint> {
    const checked = normalizeSemaphore(name, options);
    const limit = checked.permits;
    // One folder of sequential entries, holders and waiters alike (see `awaitSlot`).
    const slots = `${this.#root}/semaphores/${segmentFor(checked.name)}/slots`;
    const make =
      (permits: number): MakeLease<ManagedSemaphoreLease<bigint>> =>
      (grant) =>
        new ManagedSemaphoreLease(grant, permits);
    return {
      name: checked.name,
      permits: limit,
      acquire: async (acquireOptions) => {
        const request = normalizeSemaphoreAcquire(checked.name, limit, acquireOptions);
        const queue = this.#queueOf(semaphoreKind(limit, request.permits));
        return this.#waiting(checked.name, request, async (scope) => {
          let entry: QueueEntry | undefined;
          try {
            const joined = await queue.join(slots, null, scope.signal);
            entry = joined.entry;
            const fence = await awaitSlot(
              this.session,
              checked.name,
              limit,
              entry,
              joined.order,
              scope.signal,
            );
            const lease = this.#grants.grant(
              checked.name,
              queue,
              entry,
              fence,
              request.ttlMs,
              make(request.permits),
            );
            if (!lease) throw new EntryGoneError(entry, 'connection suspended at the grant');
            return lease;
          } finally {
            await this.#grants.giveUp(queue, entry);
          }
        });
      },
      tryAcquire: async (tryOptions) => {
        const request = normalizeSemaphoreTryAcquire(checked.name, limit, tryOptions);
        const queue = this.#queueOf(semaphoreKind(limit, request.permits));
        return this.#trying(checked.name, request, async (signal) => {
          let entry: QueueEntry | undefined;
          try {
            const joined = await queue.join(slots, null, signal);
            entry = joined.entry;
            const order = await this.#orderOf(entry, joined.order, signal);
            if (!order.includes(entry.name)) throw new EntryGoneError(entry, 'its node is gone');
            // The entries ahead only (see awaitSlot): one behind naming another count is that client's error.
            assertSameLimit(checked.name, limit, order.slice(0, order.indexOf(entry.name)));
            if (!fitsIn(order, entry.name, limit)) return null;
            // It fits: this only reads the czxid if the create's reply did not carry it.
            const fence = await awaitSlot(this.session, checked.name, limit, entry, order, signal);
            return this.#grants.grant(
              checked.name,
              queue,
              entry,
              fence,
              request.ttlMs,
              make(request.permits),
            );
          } finally {
            await this.#grants.giveUp(queue, entry);
          }
        });
      },
    };
  }

  readWriteLock(name: string): ReadWriteLock<bigint> {
    assertResource(name);
    const folder = `${this.#root}/rwlocks/${segmentFor(name)}`;
    const make =
      (mode: ReadWriteMode): MakeLease<ManagedReadWriteLease<bigint>> =>
      (grant) =>
        new ManagedReadWriteLease(grant, mode);
    const acquire = async (mode: ReadWriteMode, options: AcquireOptions) => {
      const request = normalizeAcquire(name, options);
      const queue = this.#queueOf(mode === 'read' ? READ_KIND : WRITE_KIND);
      return this.#waiting(name, request, async (scope) => {
        let entry: QueueEntry | undefined;
        try {
          const joined = await queue.join(folder, null, scope.signal);
          entry = joined.entry;
          const { czxid } =
            mode === 'write'
              ? await queue.awaitHead(entry, joined, scope.signal)
              : await queue.awaitClear(entry, joined, scope.signal, isWriter);
          const lease = this.#grants.grant(name, queue, entry, czxid, request.ttlMs, make(mode));
          if (!lease) throw new EntryGoneError(entry, 'connection suspended at the grant');
          return lease;
        } finally {
          await this.#grants.giveUp(queue, entry);
        }
      });
    };
    const tryAcquire = async (mode: ReadWriteMode, options: TryAcquireOptions) => {
      const request = normalizeTryAcquire(name, options);
      const queue = this.#queueOf(mode === 'read' ? READ_KIND : WRITE_KIND);
      return this.#trying(name, request, async (signal) => {
        let entry: QueueEntry | undefined;
        try {
          const joined = await queue.join(folder, null, signal);
          entry = joined.entry;
          const order = await this.#orderOf(entry, joined.order, signal);
          const index = order.indexOf(entry.name);
          if (index < 0) throw new EntryGoneError(entry, 'its node is gone');
          const ahead = order.slice(0, index);
          if (mode === 'write' ? ahead.length > 0 : ahead.some(isWriter)) return null;
          // Nothing blocks it: this only reads the czxid if the create's reply did not carry it.
          const { czxid } = await queue.awaitClear(entry, { entry, order }, signal, () => false);
          return this.#grants.grant(name, queue, entry, czxid, request.ttlMs, make(mode));
        } finally {
          await this.#grants.giveUp(queue, entry);
        }
      });
    };
    return readWriteLockOf(name, acquire, tryAcquire);
  }

  /** Releases every lease still held, stops waiters with `ClientClosedError`, then ends the session. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#scopes.abortAll(new ClientClosedError('ZkSharedLockClient'));
    await this.#grants.releaseAll();
    this.#offSession();
    if (this.#ownsSession) await this.session.close();
    await this.#grants.finish(this.session.sessionTimeoutMs);
  }

  /** A blocking acquire: `attempt` runs again (a new entry) while its entry vanishes under it. */
  async #waiting<L extends ManagedLease<bigint>>(
    name: string,
    request: { ttlMs: number; waitMs: number; signal: AbortSignal | undefined },
    attempt: (scope: WaitScope) => Promise<L>,
  ): Promise<L> {
    this.#assertOpen();
    const scope = this.#scopes.open(request.waitMs, request.signal);
    try {
      for (;;) {
        try {
          return await freshLease(await attempt(scope));
        } catch (error) {
          if (error instanceof EntryGoneError && !scope.signal.aborted) continue;
          throw error;
        }
      }
    } catch (error) {
      throw this.#translate(error, name, request.waitMs, request.signal, scope.timedOut);
    } finally {
      scope.dispose();
    }
  }

  /** One attempt, bounded by a session timeout (a suspended connection must not hold the caller). */
  async #trying<L extends ManagedLease<bigint>>(
    name: string,
    request: { signal: AbortSignal | undefined },
    attempt: (signal: Cancel) => Promise<L | null | undefined>,
  ): Promise<L | null> {
    this.#assertOpen();
    const boundMs = this.session.sessionTimeoutMs;
    const scope = this.#scopes.open(boundMs, request.signal);
    try {
      const lease = await attempt(scope.signal);
      if (lease === undefined) {
        throw new BackendUnavailableError('zookeeper', 'connection suspended while trying the grant');
      }
      return lease === null ? null : await freshLease(lease);
    } catch (error) {
      if (error instanceof EntryGoneError) return null;
      throw this.#translate(error, name, boundMs, request.signal, scope.timedOut);
    } finally {
      scope.dispose();
    }
  }

  /** The folder's entries in queue order: `known` from the create when it came with one, else listed. */
  async #orderOf(entry: QueueEntry, known: string[], signal: Cancel): Promise<string[]> {
    if (known.length > 0) return known;
    return queueOrder((await this.session.children(entry.folder, undefined, { signal })).children);
  }

  #queueOf(kind: string): SequentialQueue {
    let queue = this.#queues.get(kind);
    if (queue === undefined) {
      if (this.#queues.size >= QUEUE_CACHE_SIZE) this.#queues.clear();
      queue = new SequentialQueue(this.session, kind, this.#grants.background);
      this.#queues.set(kind, queue);
    }
    return queue;
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError('ZkSharedLockClient');
  }

  #translate(
    error: unknown,
    resource: string,
    waitMs: number,
    signal: AbortSignal | undefined,
    timedOut: boolean,
  ): unknown {
    if (isFencekitError(error)) return error;
    if (this.#closed) return new ClientClosedError('ZkSharedLockClient');
    if (timedOut) return new LockTimeoutError(resource, waitMs, { cause: error });
    if (signal?.aborted) return new LockAbortedError(resource, { cause: signal.reason });
    if (error instanceof ZkCallError)
      return new BackendUnavailableError('zookeeper', error.message, { cause: error });
    return error;
  }
}
