/**
 * One bounded wait: aborted by the caller's signal or when `waitMs` runs out, whichever comes first,
 * and able to say which of the two ended it. `dispose()` clears the timer.
 */
export interface WaitScope {
  readonly signal: AbortSignal;
  readonly timedOut: boolean;
  dispose(): void;
}

export function waitScope(waitMs: number, signal: AbortSignal | undefined): WaitScope {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(signal?.reason);
  // An infinite wait (a campaign bounded only by its signal) needs no timer.
  const timer = Number.isFinite(waitMs)
    ? setTimeout(() => {
        timedOut = true;
        controller.abort(new Error(`wait of ${waitMs} ms ran out`));
      }, waitMs)
    : undefined;
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}
