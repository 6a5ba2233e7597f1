import { sleep } from '@fencekit/core';

export interface PollOptions {
  /** What is being waited for, for the error message. */
  readonly what: string;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
  /** Errors that no later attempt can cure (the server process is gone): rethrown at once, not waited out. */
  readonly fatal?: (error: unknown) => boolean;
}

/**
 * Calls `probe` until it returns a value other than `undefined`, bounded by `timeoutMs`. A probe that throws
 * counts as "not yet" (the last error is attached as `cause` of the timeout error), unless `fatal` says the
 * error is permanent.
 */
export async function poll<T>(probe: () => Promise<T | undefined>, options: PollOptions): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  let lastError: unknown;
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      if (options.fatal?.(error)) throw error;
      lastError = error;
    }
    if (performance.now() >= deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Timed out after ${options.timeoutMs} ms waiting for ${options.what}${detail}`, {
        cause: lastError,
      });
    }
    await sleep(Math.min(options.intervalMs ?? 100, 20 + attempt * 20), options.signal);
  }
}

/** Rejects with a timeout error if `promise` has not settled within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
