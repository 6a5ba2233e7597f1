/**
 * AbortSignal helpers that clean up after themselves. Node's `AbortSignal.any` and
 * `AbortSignal.timeout` keep listeners or timers alive until the sources are collected; every helper
 * here hands back a `dispose()` so a finished wait leaves nothing behind.
 */

/** A signal plus the clean-up that detaches it from its sources and clears its timer. */
export interface DisposableSignal extends Disposable {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * What `sleep` needs of a signal: an `AbortSignal`, or a lighter object with the same abort members
 * (the zk adapter's per-wait scopes).
 */
export type AbortLike = Pick<AbortSignal, 'aborted' | 'reason'> & {
  addEventListener(type: 'abort', listener: () => void, options?: { once: true }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
};

/** The reason a signal carries, or a generic `AbortError` for signals aborted without one. */
export function abortReason(signal: Pick<AbortSignal, 'reason'>): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Resolves after `ms`, or rejects with `signal.reason` as soon as `signal` aborts (immediately if it
 * already has). The timer is cleared on abort, so an aborted sleep holds nothing.
 */
export function sleep(ms: number, signal?: AbortLike): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortLike));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A signal aborted when any of `signals` aborts, with that signal's reason. `undefined` entries are
 * ignored. Call `dispose()` when done so long-lived sources do not collect listeners.
 */
export function combineSignals(...signals: (AbortSignal | undefined)[]): DisposableSignal {
  const controller = new AbortController();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const detach = (): void => {
    for (const source of sources) source.removeEventListener('abort', onAbort);
  };
  const onAbort = function (this: AbortSignal): void {
    detach();
    controller.abort(abortReason(this));
  };
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(abortReason(source));
      break;
    }
  }
  if (!controller.signal.aborted) {
    for (const source of sources) source.addEventListener('abort', onAbort, { once: true });
  }
  return disposable(controller.signal, detach);
}

/**
 * A signal aborted after `ms` with `reason()` (default: a `TimeoutError` DOMException), or earlier
 * when `parent` aborts, with the parent's reason. `dispose()` clears the timer.
 */
export function deadlineSignal(ms: number, parent?: AbortSignal, reason?: () => unknown): DisposableSignal {
  const combined = combineSignals(parent);
  const controller = new AbortController();
  const onParent = (): void => {
    clearTimeout(timer);
    controller.abort(abortReason(combined.signal));
  };
  const timer = setTimeout(
    () => {
      combined.dispose();
      controller.abort(reason ? reason() : new DOMException(`Deadline of ${ms} ms passed`, 'TimeoutError'));
    },
    Math.max(0, ms),
  );
  if (combined.signal.aborted) onParent();
  else combined.signal.addEventListener('abort', onParent, { once: true });
  return disposable(controller.signal, () => {
    clearTimeout(timer);
    combined.signal.removeEventListener('abort', onParent);
    combined.dispose();
  });
}

/**
 * Rejects with the signal's reason when it aborts; never settles otherwise. Use inside
 * `Promise.race` and call `dispose()` afterwards to drop the listener.
 */
export function abortedPromise(signal: AbortSignal): { promise: Promise<never>; dispose(): void } {
  let onAbort: (() => void) | undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  // A race that was won by the other side must not turn this into an unhandled rejection later.
  promise.catch(() => {});
  return {
    promise,
    dispose: () => {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Waits until `promise` settles or `ms` pass, whichever is first; never rejects. Resolves `true` if
 * the promise settled in time. For clean-up steps (a release, a last extension) that must not
 * hold their caller hostage to a backend that stopped answering.
 */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise.then(settledTrue, settledTrue), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}

function settledTrue(): boolean {
  return true;
}

function disposable(signal: AbortSignal, dispose: () => void): DisposableSignal {
  return { signal, dispose, [Symbol.dispose]: dispose };
}
