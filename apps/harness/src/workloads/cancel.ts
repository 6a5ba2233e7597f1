import { LockAbortedError } from '@fencekit/core';
import type { ClientConfig } from './types.js';

/**
 * `--abort-rate`: some acquires are given up by their caller while they may still be in flight (an
 * AbortSignal fired after 0–8 ms, or a waitMs of 1–4 ms), so a backend that leaves the given-up
 * acquire's queue entry behind blocks everyone else (liveness). Chosen by the run's seeded RNG, so a
 * seed replays the same choices; a rate of 0 draws nothing, leaving every other run's draws as they were.
 */
export interface Cancel {
  /** What the invoke records of it: `abortAfterMs`, or `waitMs` (then it replaces the run's wait). */
  readonly recorded: { abortAfterMs: number } | { waitMs: number };
  /** The signal to give the acquire: the run's `stopping`, or one that also aborts after `abortAfterMs`. */
  readonly signal: AbortSignal;
  /** Clears the timer and the listener on `stopping`. */
  dispose(): void;
}

const ABORT_MAX_MS = 8;
const WAIT_MIN_MS = 1;
const WAIT_MAX_MS = 4;

/** Undefined for an acquire that is not cancelled (always, at rate 0). */
export function drawCancel(
  config: Pick<ClientConfig, 'abortRate'>,
  resource: string,
  stopping: AbortSignal,
  random: () => number,
): Cancel | undefined {
  const rate = config.abortRate ?? 0;
  if (rate <= 0 || random() >= rate) return undefined;
  if (random() < 0.5) {
    const waitMs = WAIT_MIN_MS + Math.floor(random() * (WAIT_MAX_MS - WAIT_MIN_MS + 1));
    return { recorded: { waitMs }, signal: stopping, dispose() {} };
  }
  const abortAfterMs = Math.floor(random() * (ABORT_MAX_MS + 1));
  const controller = new AbortController();
  // The reason is the contract's own abort error, so the op is recorded as a definite `fail`.
  const abort = () => controller.abort(new LockAbortedError(resource));
  const onStop = () => controller.abort(stopping.reason);
  if (stopping.aborted) onStop();
  else stopping.addEventListener('abort', onStop, { once: true });
  const timer = setTimeout(abort, abortAfterMs);
  return {
    recorded: { abortAfterMs },
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      stopping.removeEventListener('abort', onStop);
    },
  };
}
