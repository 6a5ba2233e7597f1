/**
 * The coordinator's go-ahead for a client's windows, matched by sequence number so a late answer to
 * one window (the client was stopped, its wait timed out) never releases a later one.
 */
export class WindowAcks {
  #seq = 0;
  #arrived = 0;
  #waiting: { seq: number; resolve: () => void } | undefined;

  next(): number {
    this.#seq += 1;
    return this.#seq;
  }

  arrived(seq: number): void {
    this.#arrived = Math.max(this.#arrived, seq);
    if (this.#waiting && this.#waiting.seq <= seq) this.#waiting.resolve();
  }

  /** Resolves once `seq` was acknowledged, after `timeoutMs`, or on abort, whichever comes first. */
  wait(seq: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.#arrived >= seq || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#waiting = undefined;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.#waiting = { seq, resolve: done };
    });
  }
}
