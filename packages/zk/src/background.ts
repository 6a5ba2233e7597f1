/**
 * Deletes a client runs in the background (a node given up after a failed release, a reclaim that
 * gave up, a withdrawn campaign), so that close() can wait for them: each is bounded by a session
 * timeout, and settles at once when the session closes.
 */
export class BackgroundWork {
  readonly #running = new Set<Promise<unknown>>();

  /** Runs `work` in the background; its failure is the caller's to have handled (`onError`). */
  start(work: Promise<unknown>, onError: (error: unknown) => void): void {
    const running = work.catch(onError).finally(() => this.#running.delete(running));
    this.#running.add(running);
  }

  /**
   * Resolves once nothing is running, including work started while waiting: an acquire or campaign
   * that close() aborted starts its delete a few promise turns after the abort, so one snapshot of the
   * set could miss it. Each pass waits for what runs, then one macrotask turn for late starts.
   */
  async drain(): Promise<void> {
    for (;;) {
      await Promise.allSettled([...this.#running]);
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#running.size === 0) return;
    }
  }
}
