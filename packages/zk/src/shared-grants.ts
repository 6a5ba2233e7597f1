import {
  type GrantedLease,
  IndeterminateError,
  LockLostError,
  type ManagedLease,
  monotonicNow,
} from '@fencekit/core';
import { BackgroundWork } from './background.js';
import { UNSURE } from './lock.js';
import type { QueueEntry, SequentialQueue } from './queue.js';
import type { ZkSession } from './session.js';

export type MakeLease<L> = (grant: GrantedLease<bigint>) => L;

interface Held {
  readonly lease: ManagedLease<bigint>;
  readonly entry: QueueEntry;
}

/**
 * The grants of one `ZkSharedLockClient` and the nodes it gives up: leases on queue entries (the
 * mutex's lifetime rules: valid for `ttlMs` locally, never past what the session vouches for; a lapsed
 * or lost lease's node deleted for the next waiter), and the deletes running in the background, which
 * `finish` bounds at close().
 */
export class SharedGrants {
  readonly #held = new Map<string, Held>();
  readonly #background = new BackgroundWork();

  constructor(private readonly session: ZkSession) {}

  has(entry: QueueEntry): boolean {
    return this.#held.has(entry.path);
  }

  /** Ends every lease of `generation` (or every lease) as lost. */
  markLost(reason: string, cause?: unknown, generation?: number): void {
    for (const held of [...this.#held.values()]) {
      if (generation === undefined || held.entry.generation === generation)
        held.lease.markLost(reason, cause);
    }
  }

  /** close(): releases every lease still held. */
  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.#held.values()].map((held) => held.lease.release()));
  }

  /** close(): lets background deletes finish for up to `graceMs`, then stops them. */
  finish(graceMs: number): Promise<void> {
    return this.#background.finish(graceMs);
  }

  /** A lease on `entry`, or undefined while the session is not vouched for. */
  grant<L extends ManagedLease<bigint>>(
    resource: string,
    queue: SequentialQueue,
    entry: QueueEntry,
    fence: bigint,
    ttlMs: number,
    make: MakeLease<L>,
  ): L | undefined {
    // As the mutex: nothing is granted while the session is not vouched for (suspended, or stalled).
    if (!this.session.connected || this.session.generation !== entry.generation) return undefined;
    if (monotonicNow() >= this.session.aliveUntil(entry.generation)) return undefined;
    let released = false;
    const lease = make({
      resource,
      owner: entry.owner,
      fence,
      sentAt: monotonicNow(),
      ttlMs,
      validityCap: { until: () => this.session.aliveUntil(entry.generation), reason: UNSURE },
      operations: {
        extend: async (_ttlMs, options) => {
          let exists: boolean;
          try {
            exists = (await this.session.exists(entry.path, undefined, { signal: options.signal })) !== null;
          } catch (error) {
            throw new IndeterminateError(resource, 'extend', { cause: error });
          }
          if (!exists || this.session.generation !== entry.generation) {
            throw new LockLostError(resource, `node ${entry.path} no longer exists`);
          }
        },
        release: async () => {
          released = true;
          let removed: boolean;
          try {
            removed = await queue.leave(entry);
          } catch (error) {
            this.abandon(queue, entry);
            throw new IndeterminateError(resource, 'release', { cause: error });
          }
          if (!removed && this.session.givenUp(entry.generation)) {
            // The servers may keep the session this client gave up: withdraw the node through the new one.
            this.abandon(queue, entry);
            throw new IndeterminateError(resource, 'release', {
              cause: new Error(
                `session of ${entry.path} given up unanswered: withdrawing it in the background`,
              ),
            });
          }
          // Already gone (expired lease, ended session): its permits are free already, nothing to do.
        },
      },
      onEnd: (ended) => {
        if (this.#held.get(entry.path)?.lease === ended) this.#held.delete(entry.path);
        // Lapsed, lost or unsure: give the node up so the next waiter proceeds.
        if (!released) this.abandon(queue, entry);
      },
    });
    this.#held.set(entry.path, { lease, entry });
    return lease;
  }

  /**
   * Deletes the entries an attempt no longer needs (any not granted; a granted semaphore's queue
   * entry). Those an attempt gave up on are deleted before it returns, so that a caller's next call (or
   * another client's) never finds them still queued; a granted semaphore's queue entry goes in the
   * background (its successor is woken by the delete either way; this session's later requests are
   * applied after it).
   */
  async giveUp(queue: SequentialQueue, ...entries: (QueueEntry | undefined)[]): Promise<void> {
    const granted = entries.some((entry) => entry !== undefined && this.#held.has(entry.path));
    const left: Promise<void>[] = [];
    for (const entry of entries) {
      if (entry === undefined || this.#held.has(entry.path)) continue;
      if (granted) {
        this.abandon(queue, entry);
        continue;
      }
      left.push(
        queue.leave(entry).then(
          (removed) => {
            // Not removed through a session given up meanwhile: the servers may keep it, withdraw it.
            if (!removed && this.session.generation !== entry.generation) this.abandon(queue, entry);
          },
          () => this.abandon(queue, entry),
        ),
      );
    }
    await Promise.all(left);
  }

  /** Deletes an entry in the background, through whatever session the client has (close() bounds it). */
  abandon(queue: SequentialQueue, entry: QueueEntry): void {
    this.#background.start(queue.withdraw(entry, this.#background.signal), () => {
      // Refused outright: the session is closing or closed, and the node with it.
    });
  }
}
