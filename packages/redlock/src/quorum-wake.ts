import type { Waiter } from '@fencekit/redis/internal';

/**
 * Turns per-node wake-ups into one. A release reaches the nodes at slightly different moments, and
 * each node wakes the head waiter as soon as it has released; attempting on the first wake-up
 * often finds the other nodes still held and fails the quorum. So the waiter is resumed once a
 * quorum of nodes has announced the release, or `graceMs` after the first did (a node that never
 * announces — down, or its head is another waiter — must not stall the waiter until its timer).
 *
 * It also counts direct grants: a release that granted the lock to this waiter on its node says so
 * with the generation of the attempt whose queue entry it granted on. Only the current generation
 * counts (`expect`): a grant made on an older entry may have been given back since.
 */
export class QuorumWake {
  readonly #woken = new Set<number>();
  readonly #handed = new Set<number>();
  #generation = '';
  #grace: NodeJS.Timeout | undefined;

  constructor(
    readonly waiter: Waiter,
    readonly quorum: number,
    readonly graceMs: number,
  ) {}

  /**
   * From now on only grants tagged `generation` count, and those counted so far are forgotten. Call
   * it before each attempt with a fresh generation, and with '' after an attempt gave back.
   */
  expect(generation: string): void {
    this.#generation = generation;
    this.#handed.clear();
  }

  /** True once a quorum of nodes granted the lock to this waiter on its current generation's entries. */
  get handedQuorum(): boolean {
    return this.#handed.size >= this.quorum;
  }

  /** The wake-up handler for the node at `index`; `generation` is set when that node granted to us. */
  from(index: number): (generation?: string) => void {
    return (generation) => {
      // '' is never a generation: it is what `expect('')` sets to count nothing.
      if (generation && generation === this.#generation) this.#handed.add(index);
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
