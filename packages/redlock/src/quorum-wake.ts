import type { Waiter } from '@fencekit/redis';

/**
 * Turns per-node wake-ups into one. A release reaches the nodes at slightly different moments, and
 * each node wakes the head waiter as soon as it has released; attempting on the first wake-up
 * often finds the other nodes still held and fails the quorum. So the waiter is resumed once a
 * quorum of nodes has announced the release, or `graceMs` after the first did (a node that never
 * announces — down, or its head is another waiter — must not stall the waiter until its timer).
 */
export class QuorumWake {
  readonly #woken = new Set<number>();
  #grace: NodeJS.Timeout | undefined;

  constructor(
    readonly waiter: Waiter,
    readonly quorum: number,
    readonly graceMs: number,
  ) {}

  /** The wake-up handler for the node at `index`. */
  from(index: number): () => void {
    return () => {
      this.#woken.add(index);
      if (this.#woken.size >= this.quorum) this.#resume();
      else this.#grace ??= setTimeout(() => this.#resume(), this.graceMs);
    };
  }

  dispose(): void {
    clearTimeout(this.#grace);
    this.#grace = undefined;
  }

  #resume(): void {
    this.dispose();
    this.#woken.clear();
    this.waiter.wake();
  }
}
