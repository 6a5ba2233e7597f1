/**
 * One signal that aborts when any of `signals` does, with the first one's reason. Unlike
 * `AbortSignal.any`, `dispose()` detaches it from long-lived sources (sessions, the client), so
 * thousands of acquires leave no listeners behind.
 */
export function anySignal(signals: readonly (AbortSignal | undefined)[]): {
  signal: AbortSignal;
  dispose: () => void;
} {
  const controller = new AbortController();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const already = sources.find((s) => s.aborted);
  if (already) {
    controller.abort(already.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const listeners = sources.map((source) => {
    const listener = () => controller.abort(source.reason);
    source.addEventListener('abort', listener, { once: true });
    return () => source.removeEventListener('abort', listener);
  });
  return {
    signal: controller.signal,
    dispose: () => {
      for (const remove of listeners) remove();
    },
  };
}

/** `promise`, or a rejection with `signal.reason` as soon as `signal` aborts. */
export async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  let listener: (() => void) | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        listener = () => reject(signal.reason);
        signal.addEventListener('abort', listener, { once: true });
      }),
    ]);
  } finally {
    if (listener) signal.removeEventListener('abort', listener);
  }
}

/** A signal aborted with `reason()` after `ms`; `clear()` cancels the timer. */
export function deadlineSignal(ms: number, reason: () => Error): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  if (!Number.isFinite(ms)) return { signal: controller.signal, clear: () => {} };
  if (ms <= 0) {
    controller.abort(reason());
    return { signal: controller.signal, clear: () => {} };
  }
  const timer = setTimeout(() => controller.abort(reason()), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
