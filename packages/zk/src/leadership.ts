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
    this.#resigning = this.withdraw().catch(() => {});
  }

  resign(): Promise<void> {
    if (!this.#controller.signal.aborted) {
      this.#controller.abort(new LockLostError(this.election, 'resigned by its leader'));
      this.onEnd();
    }
    this.#resigning ??= this.withdraw();
    return this.#resigning;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign();
  }
}
