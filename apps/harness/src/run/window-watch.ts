import type { ClientHandle, WindowWait } from '../nemesis/nemesis.js';

/**
 * The clients' windows (a client between its validity check and its write) as they open, for the
 * nemesis: each waiter says whether it takes the client; one nobody takes goes on to the next waiter.
 * A waiter that pauses the client does so here, in the message handler itself, before anything else
 * runs on this side.
 */
export class WindowWatch {
  readonly #waiters: ((client: ClientHandle) => boolean)[] = [];

  opened(client: ClientHandle): void {
    for (const waiter of [...this.#waiters]) if (waiter(client)) break;
  }

  /** See `NemesisContext.nextWindow`. */
  next(timeoutMs: number, signal: AbortSignal, wait: WindowWait = {}): Promise<ClientHandle | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const done = (client: ClientHandle | undefined) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', cancel);
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        resolve(client);
      };
      const waiter = (client: ClientHandle) => {
        if (wait.accept && !wait.accept(client)) return false;
        if (wait.pause) client.pause();
        done(client);
        return true;
      };
      const cancel = () => done(undefined);
      const timer = setTimeout(cancel, timeoutMs);
      signal.addEventListener('abort', cancel, { once: true });
      this.#waiters.push(waiter);
    });
  }
}
