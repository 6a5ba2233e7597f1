import { type Leadership, LockLostError } from '@fencekit/core';

/**
 * One term as leader. `signal` aborts the moment leadership is lost, unsure (connection suspended)
 * or resigned; `resign()` aborts first, then withdraws the candidate's node.
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
  ) {}

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get isLeader(): boolean {
    return !this.#controller.signal.aborted;
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
