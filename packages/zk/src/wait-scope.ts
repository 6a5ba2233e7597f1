/**
 * One bounded wait: aborted by any of the given signals or when `waitMs` runs out, whichever comes
 * first, and able to say which ended it. `dispose()` clears the timer and the listeners.
 * (Listeners instead of `AbortSignal.any`, which costs tens of microseconds per call on Node 20 and
 * sits on every acquire.)
 */
export interface WaitScope {
  readonly signal: AbortSignal;
  readonly timedOut: boolean;
  /** Ends the wait now with `reason` (e.g. the client is closing). */
  abort(reason: unknown): void;
  dispose(): void;
}

export function waitScope(waitMs: number, ...signals: (AbortSignal | undefined)[]): WaitScope {
  const controller = new AbortController();
  let timedOut = false;
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const listeners = sources.map((source) => {
    const onAbort = () => controller.abort(source.reason);
    return { source, onAbort };
  });
  // An infinite wait (a campaign bounded only by its signal) needs no timer.
  const timer = Number.isFinite(waitMs)
    ? setTimeout(() => {
        timedOut = true;
        controller.abort(new Error(`wait of ${waitMs} ms ran out`));
      }, waitMs)
    : undefined;
  for (const { source, onAbort } of listeners) {
    if (source.aborted) {
      onAbort();
      break;
    }
    source.addEventListener('abort', onAbort, { once: true });
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    abort(reason: unknown) {
      controller.abort(reason);
    },
    dispose() {
      clearTimeout(timer);
      for (const { source, onAbort } of listeners) source.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * The open waits of one client, so that `close()` can end them all: cheaper than every wait listening
 * on a long-lived "closing" signal (an AbortSignal listener added and removed per acquire).
 */
export class WaitScopes {
  readonly #live = new Set<WaitScope>();
  #closedWith: { reason: unknown } | undefined;

  open(waitMs: number, signal: AbortSignal | undefined): WaitScope {
    const scope = waitScope(waitMs, signal);
    if (this.#closedWith) scope.abort(this.#closedWith.reason);
    const live = this.#live;
    live.add(scope);
    return {
      signal: scope.signal,
      get timedOut() {
        return scope.timedOut;
      },
      abort: (reason) => scope.abort(reason),
      dispose() {
        live.delete(scope);
        scope.dispose();
      },
    };
  }

  /** Aborts every open wait, and every wait opened from now on. */
  abortAll(reason: unknown): void {
    this.#closedWith = { reason };
    for (const scope of [...this.#live]) scope.abort(reason);
  }
}
