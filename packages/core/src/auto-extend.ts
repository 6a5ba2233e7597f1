import { abortReason, settleWithin } from './abort.js';
import { Backoff } from './backoff.js';
import { monotonicNow } from './clock.js';
import type { Fence, Lease } from './contract.js';
import { InvalidArgumentError, isFencekitError, LockLostError } from './errors.js';
import { assertNonNegativeMs, assertSignal, assertTtlMs } from './validate.js';

export interface AutoExtendOptions {
  /** TTL asked for on every extension. */
  ttlMs: number;
  /** Extend after this fraction of `ttlMs` has passed since the last success. Default 1/3. */
  extendEveryFraction?: number;
  /**
   * Abort `signal` this long before `validUntil` when no extension has landed by then, so work
   * stops while the lease is still valid. Default: a tenth of `ttlMs`, at most 1 000 ms.
   */
  safetyMarginMs?: number;
  /** The caller's own cancellation; aborts the handle's `signal` with the same reason. */
  signal?: AbortSignal;
  /** Told about extension failures that are retried (backend unavailable, indeterminate…). */
  onRetry?: (error: unknown) => void;
}

/** A running auto-extension. */
export interface AutoExtendHandle extends AsyncDisposable {
  /**
   * Aborted *before* the lease expires when an extension fails for good or does not land in time,
   * when the lease is lost or released, or when the caller's signal aborts; `reason` says which
   * (a `LockLostError` for the lease's own troubles).
   */
  readonly signal: AbortSignal;
  /** Stops extending and waits for an extension in flight. Does not release the lease. Idempotent. */
  stop(): Promise<void>;
}

/** Checks `AutoExtendOptions` and fills the defaults. */
export function normalizeAutoExtend(
  options: AutoExtendOptions,
): Required<Omit<AutoExtendOptions, 'signal' | 'onRetry'>> {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with ttlMs');
  }
  assertTtlMs('ttlMs', options.ttlMs);
  const fraction = options.extendEveryFraction ?? 1 / 3;
  if (typeof fraction !== 'number' || !(fraction > 0 && fraction < 1)) {
    throw new InvalidArgumentError('extendEveryFraction', fraction, 'a number strictly between 0 and 1');
  }
  const margin = options.safetyMarginMs ?? Math.min(1_000, options.ttlMs / 10);
  assertNonNegativeMs('safetyMarginMs', margin);
  if (margin >= options.ttlMs * (1 - fraction)) {
    throw new InvalidArgumentError(
      'safetyMarginMs',
      margin,
      `less than the time left after an extension is due (ttlMs × (1 − extendEveryFraction) = ${
        options.ttlMs * (1 - fraction)
      } ms)`,
    );
  }
  assertSignal('signal', options.signal);
  return { ttlMs: options.ttlMs, extendEveryFraction: fraction, safetyMarginMs: margin };
}

/**
 * Keeps `lease` alive: extends it every `ttlMs × extendEveryFraction`, retries transient failures
 * with jittered backoff, and aborts the returned `signal` at `validUntil − safetyMarginMs` if no
 * extension has landed by then. Stop it (or dispose it) before releasing the lease.
 */
export function autoExtend<F extends Fence | undefined>(
  lease: Lease<F>,
  options: AutoExtendOptions,
): AutoExtendHandle {
  const { ttlMs, extendEveryFraction, safetyMarginMs } = normalizeAutoExtend(options);
  const controller = new AbortController();
  // Cancels an extension in flight on stop() as well as on give-up; `controller` stays for the work.
  const requests = new AbortController();
  const backoff = new Backoff({ baseMs: Math.max(1, ttlMs / 50), capMs: Math.max(1, ttlMs / 6) });
  let extendTimer: NodeJS.Timeout | undefined;
  let guardTimer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let stopped = false;

  const clearTimers = (): void => {
    clearTimeout(extendTimer);
    clearTimeout(guardTimer);
  };
  const detach = (): void => {
    lease.signal.removeEventListener('abort', onLeaseEnd);
    options.signal?.removeEventListener('abort', onCallerAbort);
  };
  const giveUp = (reason: unknown): void => {
    clearTimers();
    detach();
    requests.abort(reason);
    if (!controller.signal.aborted) controller.abort(reason);
  };
  function onLeaseEnd(): void {
    giveUp(abortReason(lease.signal));
  }
  function onCallerAbort(): void {
    giveUp(abortReason(options.signal as AbortSignal));
  }
  // Timers are unref'd: a forgotten handle must not keep a process alive extending a lease forever.
  const schedule = (ms: number): void => {
    if (stopped || controller.signal.aborted) return;
    clearTimeout(extendTimer);
    extendTimer = setTimeout(extendOnce, Math.max(0, ms));
    extendTimer.unref();
  };
  const armGuard = (): void => {
    clearTimeout(guardTimer);
    const delay = lease.validUntil - safetyMarginMs - monotonicNow();
    const lost = () =>
      giveUp(new LockLostError(lease.resource, `no extension landed ${safetyMarginMs} ms before expiry`));
    if (delay <= 0) {
      lost();
      return;
    }
    guardTimer = setTimeout(lost, delay);
    guardTimer.unref();
  };
  function extendOnce(): void {
    if (stopped || controller.signal.aborted) return;
    inFlight = lease.extend(ttlMs, { signal: requests.signal }).then(
      () => {
        if (stopped || controller.signal.aborted) return;
        backoff.reset();
        armGuard();
        schedule(ttlMs * extendEveryFraction);
      },
      (error: unknown) => {
        if (stopped || controller.signal.aborted) return;
        if (isFencekitError(error, 'lost') || isFencekitError(error, 'not-holder') || !lease.held) {
          giveUp(error);
          return;
        }
        try {
          options.onRetry?.(error);
        } catch {
          // A failing observer must not stop the extension loop or reject this promise.
        }
        schedule(backoff.next());
      },
    );
  }

  if (options.signal?.aborted) giveUp(abortReason(options.signal));
  else if (lease.signal.aborted) giveUp(abortReason(lease.signal));
  else {
    lease.signal.addEventListener('abort', onLeaseEnd, { once: true });
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    armGuard();
    schedule(ttlMs * extendEveryFraction);
  }

  const stop = async (): Promise<void> => {
    stopped = true;
    clearTimers();
    detach();
    requests.abort(new DOMException('auto-extension stopped', 'AbortError'));
    // The in-flight promise never rejects (both outcomes are handled above). A backend that ignores
    // the abort is waited for at most one TTL: after that the extension's outcome cannot matter.
    if (inFlight) await settleWithin(inFlight, ttlMs);
  };
  return { signal: controller.signal, stop, [Symbol.asyncDispose]: stop };
}
