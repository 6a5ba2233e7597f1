import type { UnindexedEvent } from '../history/event.js';

/**
 * Streams a child process's history events to the coordinator over the IPC channel, batched per
 * event-loop turn, and ends with `{kind:'done', count}` so the coordinator can tell a complete history
 * from one that lost lines (a complete-looking history with lost lines must never be judged `ok`).
 */
export class EventPipe {
  #batch: UnindexedEvent[] = [];
  #count = 0;
  #scheduled = false;

  push(event: UnindexedEvent): void {
    this.#batch.push(event);
    this.#count++;
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#batch.length === 0) return;
    const events = this.#batch;
    this.#batch = [];
    process.send?.({ kind: 'events', events });
  }

  /** Sends what is left and the count, then lets the process exit once the channel has drained. */
  finish(extra: Record<string, unknown> = {}): void {
    this.flush();
    process.send?.({ kind: 'done', count: this.#count, ...extra }, () => process.disconnect?.());
  }
}
