import { type Leadership, LockLostError, monotonicNow } from '@fencekit/core';
import { UNSURE } from './lock.js';

/**
 * One term as leader. `signal` aborts the moment leadership is lost, unsure (connection suspended)
 * or resigned; `resign()` aborts first, then withdraws the candidate's node. `isLeader` also reads the
 * session's vouched span when asked (`aliveUntil`), so a leader whose process stalled past it reads
 * false on its first line after the stall, before any event has been delivered.
 */
export class ZkLeadership implements Leadership {
  readonly #controller = new AbortController();
  #resigning: Promise<void> | undefined;

  constructor(
    readonly election: string,
    readonly candidate: string,
    /** The candidate node's czxid: strictly increasing across successive leaders. */
    readonly term: bigint,
    /** The candidate's znode. */
    readonly node: string,
    private readonly withdraw: () => Promise<void>,
    private readonly onEnd: () => void,
    /** Until when the session is surely alive on the ensemble (`ZkSession.aliveUntil`). */
    private readonly aliveUntil: () => number,
  ) {}

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get isLeader(): boolean {
    if (this.#controller.signal.aborted) return false;
    if (monotonicNow() >= this.aliveUntil()) {
      this.lose(UNSURE, new Error('no answer from ZooKeeper vouches for the session any more'));
      return false;
    }
    return true;
  }

  /** Ends the term for `reason` (session expired, unsure); the node is withdrawn in the background. */
  lose(reason: string, cause?: unknown): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(
      new LockLostError(this.election, reason, cause === undefined ? undefined : { cause }),
    );
    this.onEnd();
    this.#withdrawOnce().catch(() => {
      // Unconfirmed: the election withdraws the node in the background.
    });
  }

  /**
   * Ends the term and withdraws the node. Throws `IndeterminateError` when the delete was not
   * confirmed within one session timeout: the node is then withdrawn in the background until deleted
   * or its session is gone, and calling `resign()` again waits for that (one session timeout more).
   */
  resign(): Promise<void> {
    if (!this.#controller.signal.aborted) {
      this.#controller.abort(new LockLostError(this.election, 'resigned by its leader'));
      this.onEnd();
    }
    return this.#withdrawOnce();
  }

  /** One withdrawal at a time; a confirmed one is kept, a failed one is tried again on the next call. */
  #withdrawOnce(): Promise<void> {
    if (this.#resigning) return this.#resigning;
    const attempt = this.withdraw().catch((error: unknown) => {
      if (this.#resigning === attempt) this.#resigning = undefined;
      throw error;
    });
    this.#resigning = attempt;
    return attempt;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign();
  }
}
