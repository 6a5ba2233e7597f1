import {
  ClientClosedError,
  LockAbortedError,
  LockTimeoutError,
  monotonicNow,
  settleWithin,
} from '@fencekit/core';

/**
 * A parked acquire. It sleeps until its wake-up message arrives, its fallback timer fires (lock
 * expiry, a dead waiter ahead, the heartbeat that keeps its queue entry alive) or it is stopped.
 * A wake that lands while an attempt is in flight is remembered, so the next sleep returns at once.
 */
export class Waiter {
  #woken = false;
  #handedFence: string | undefined;
  #resume: (() => void) | undefined;

  /** Called by the wake subscriber; `handedFence` is set when a release granted the lock to us. */
  readonly wake = (handedFence?: string): void => {
    if (handedFence !== undefined) this.#handedFence = handedFence;
    this.#woken = true;
    this.#resume?.();
  };

  /** The fence of a grant a release handed to this waiter, once. */
  takeHandedFence(): string | undefined {
    const fence = this.#handedFence;
    this.#handedFence = undefined;
    return fence;
  }

  /** Forgets earlier wake-ups: called as an attempt starts, since that attempt sees their effect. */
  clear(): void {
    this.#woken = false;
  }

  sleep(ms: number, stop: AbortSignal): Promise<void> {
    if (this.#woken || stop.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        stop.removeEventListener('abort', done);
        this.#resume = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      stop.addEventListener('abort', done);
      this.#resume = done;
    });
  }
}

/**
 * How long past `waitMs` (or past the caller's abort) a stopped acquire may take to settle: the
 * bound both clients document. Its clean-up goes on in the background after it.
 */
export const STOP_GRACE_MS = 250;

export type AttemptOutcome<G> =
  | { readonly grant: G }
  /** Not granted: look again after `retryMs` unless woken; `error` is why, when it was a failure. */
  | { readonly retryMs: number; readonly error?: unknown };

export interface WaitPlan<G> {
  readonly resource: string;
  /** `monotonicNow()` when the caller's acquire began: `waitMs` counts from there. */
  readonly startedAt: number;
  readonly waitMs: number;
  readonly signal: AbortSignal | undefined;
  /** Aborted when the client closes. */
  readonly closing: AbortSignal;
  readonly clientName: string;
  /** Upper bound on any sleep: keeps the waiter's queue entry alive and covers lost wake-ups. */
  readonly heartbeatMs: number;
  readonly waiter: Waiter;
  attempt(): Promise<AttemptOutcome<G>>;
  /**
   * The first attempt's refusal when the caller sent that attempt itself (already queued, its
   * waiter already listening): the loop parks first instead of asking again. A stop that comes
   * before then still cancels, since the queue entry exists.
   */
  readonly initial?: { readonly retryMs: number };
  /** A grant handed over while parked (checked after each wake-up), if the backend does that. */
  handedOver?(): G | undefined;
  /**
   * The longest one attempt can take (its requests' own timeouts added up): a stop waits that long
   * at most for the attempt in flight before cancelling; 0 when the cancel is sure to be applied
   * after the attempt anyway (one ordered connection).
   */
  readonly attemptBoundMs: number;
  /** Leaves the queue and gives back any grant that raced with the stop. Must not throw. */
  cancel(): Promise<void>;
  /**
   * How long a stopped acquire waits for its clean-up (the attempt in flight, then `cancel`) before
   * it rejects anyway: `waitMs` is a bound the caller relies on, and a hung server would otherwise
   * add its whole request timeout to it. The clean-up goes on in the background, handed to `track`
   * (the client's lifecycle, so `close()` still waits for it).
   */
  readonly stopGraceMs: number;
  track(cleanup: Promise<void>): void;
}

/**
 * Runs attempts until one is granted, parking between them. Stops with `LockTimeoutError` at
 * `waitMs` (or the last attempt's error, e.g. a `QuorumError`, when attempts were failing),
 * `LockAbortedError` on the caller's signal, `ClientClosedError` on close; every stop cancels first.
 */
export async function waitForGrant<G>(plan: WaitPlan<G>): Promise<G> {
  const { startedAt, initial } = plan;
  // Queued already (initial): an abort must still cancel, so it goes through the loop's clean-up.
  if (plan.signal?.aborted && initial === undefined) {
    throw new LockAbortedError(plan.resource, { cause: plan.signal.reason });
  }
  // Armed before the first attempt too: a server that stopped answering must not hold the caller
  // past its abort or `waitMs` for a whole request timeout (only the clean-up waits for that).
  const stop = new AbortController();
  let lastError: unknown;
  let retryMs = initial?.retryMs ?? 0;
  const onAbort = (): void => stop.abort(new LockAbortedError(plan.resource, { cause: plan.signal?.reason }));
  const onClose = (): void => stop.abort(new ClientClosedError(plan.clientName));
  const timer = setTimeout(
    () => stop.abort(new LockTimeoutError(plan.resource, plan.waitMs)),
    Math.max(0, startedAt + plan.waitMs - monotonicNow()),
  );
  plan.signal?.addEventListener('abort', onAbort);
  plan.closing.addEventListener('abort', onClose);
  if (plan.closing.aborted) onClose();
  if (plan.signal?.aborted) onAbort();
  // The attempt in flight when a stop came: it is waited for before cancelling, or its later steps
  // (a Redlock round giving back its partial grants puts the waiter back in line) would land after
  // the cancel and leave a queue entry, or a grant handed to it, behind.
  let inFlight: Promise<unknown> | undefined;
  const stopReason = (): unknown =>
    stop.signal.reason instanceof LockTimeoutError && lastError !== undefined
      ? lastError
      : stop.signal.reason;
  try {
    for (let first = initial === undefined; ; first = false) {
      if (!first) {
        await plan.waiter.sleep(Math.max(1, Math.min(retryMs, plan.heartbeatMs)), stop.signal);
        if (stop.signal.aborted) throw stopReason();
        const handed = plan.handedOver?.();
        if (handed !== undefined) return handed;
      } else if (stop.signal.aborted) {
        throw stopReason();
      }
      plan.waiter.clear();
      const attempt = plan.attempt();
      inFlight = attempt;
      const outcome = await untilStopped(attempt, stop.signal);
      inFlight = undefined;
      // A grant that raced with the stop is given back by the cancel.
      if (stop.signal.aborted) throw stopReason();
      if ('grant' in outcome) return outcome.grant;
      lastError = outcome.error;
      retryMs = outcome.retryMs;
    }
  } catch (error) {
    await cleanUpWithin(plan, inFlight);
    throw error === stop.signal.reason ? stopReason() : error;
  } finally {
    clearTimeout(timer);
    plan.signal?.removeEventListener('abort', onAbort);
    plan.closing.removeEventListener('abort', onClose);
  }
}

/**
 * Starts the clean-up and waits for it at most `stopGraceMs`. On healthy servers it is done long
 * before that; only a server that does not answer leaves it running, tracked, past the caller's error.
 */
async function cleanUpWithin(plan: WaitPlan<unknown>, inFlight: Promise<unknown> | undefined): Promise<void> {
  const cleanup = cleanUp(plan, inFlight);
  plan.track(cleanup);
  await settleWithin(cleanup, plan.stopGraceMs);
}

/** Waits for the attempt in flight (bounded), then leaves the queue. Never rejects. */
async function cleanUp(plan: WaitPlan<unknown>, inFlight: Promise<unknown> | undefined): Promise<void> {
  // Bounded: every attempt has its own timeouts; this only guards against a bug.
  if (inFlight !== undefined && plan.attemptBoundMs > 0) await settleWithin(inFlight, plan.attemptBoundMs);
  await plan.cancel();
}

/** The attempt's answer, or the stop's reason if the stop comes first (the cancel cleans up after). */
function untilStopped<T>(work: Promise<T>, stop: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onStop = (): void => reject(stop.reason);
    stop.addEventListener('abort', onStop, { once: true });
    work.then(
      (value) => {
        stop.removeEventListener('abort', onStop);
        resolve(value);
      },
      (error: unknown) => {
        stop.removeEventListener('abort', onStop);
        reject(error);
      },
    );
  });
}
