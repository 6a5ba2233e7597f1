import type { UnindexedEvent } from '../history/event.js';
import type { ClientHandle } from '../nemesis/nemesis.js';

/** Takes an event (and the client that sent it) or lets it pass to the next waiter. */
type EventWaiter = (event: UnindexedEvent, client: ClientHandle) => boolean;

/**
 * The clients' event streams as they arrive, for a nemesis that acts on what clients do (a release
 * invoked, another client granted) rather than on a timer. Each wait is bounded and ends on abort.
 * Events reach this side one event-loop turn after the client recorded them (see EventPipe).
 */
export class EventWatch {
  readonly #waiters: EventWaiter[] = [];

  see(client: ClientHandle, events: readonly UnindexedEvent[]): void {
    if (this.#waiters.length === 0) return;
    for (const event of events) {
      for (const waiter of [...this.#waiters]) if (waiter(event, client)) break;
    }
  }

  /** The next event `accept` takes, or undefined after `timeoutMs` or on abort. */
  next(
    accept: (event: UnindexedEvent, client: ClientHandle) => boolean,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ event: UnindexedEvent; client: ClientHandle } | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const done = (seen: { event: UnindexedEvent; client: ClientHandle } | undefined) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', cancel);
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        resolve(seen);
      };
      const waiter: EventWaiter = (event, client) => {
        if (!accept(event, client)) return false;
        done({ event, client });
        return true;
      };
      const cancel = () => done(undefined);
      const timer = setTimeout(cancel, Math.max(0, timeoutMs));
      signal.addEventListener('abort', cancel, { once: true });
      this.#waiters.push(waiter);
    });
  }
}
