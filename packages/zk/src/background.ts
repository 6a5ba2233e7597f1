import { setMaxListeners } from 'node:events';

/**
 * Deletes a client runs in the background (a node given up after a failed release, a reclaim that
 * gave up, a withdrawn campaign), so that close() can wait for them. They retry until done, so
 * close() bounds them (`finish`): an owned session's close ends them at once, a shared session's
 * gives them a session timeout and then stops them through `signal`.
 */
export class BackgroundWork {
  readonly #running = new Set<Promise<unknown>>();
  readonly #stop = new AbortController();

  constructor() {
    // Every background delete listens on this one signal while it waits, and each removes its listener when it
    // settles: many at once is normal (60 acquires aborted against a stopped server, review #19), not the leak
    // Node's 10-listener warning is meant to catch.
    setMaxListeners(0, this.#stop.signal);
  }

  /** Aborts when the owner stops its background work (`finish`): each retry loop ends at its next step. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

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

  /**
   * close(): lets the running work finish for up to `graceMs`, then stops it (`signal`) and waits
   * until it has ended, so that close() is bounded whatever the servers do and leaves no timer.
   */
  async finish(graceMs: number): Promise<void> {
    const drained = this.drain();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.#stop.abort(new Error('client closed: background deletes stopped'));
    await drained;
    await this.drain();
  }
}
