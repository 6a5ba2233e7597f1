import { settleWithin } from './abort.js';
import { type AutoExtendOptions, autoExtend, normalizeAutoExtend } from './auto-extend.js';
import type { Fence, Lease, LockClient } from './contract.js';
import { IndeterminateError, InvalidArgumentError, LockLostError } from './errors.js';

export interface WithLockOptions {
  /** TTL of the lease; it is extended every `ttlMs × extendEveryFraction` while `fn` runs. */
  ttlMs: number;
  /** How long to wait for the lock (default 30 000 ms). */
  waitMs?: number;
  /** Cancels the wait, and (through the signal handed to `fn`) the work. */
  signal?: AbortSignal;
  /** Default 1/3. */
  extendEveryFraction?: number;
  /** Abort `fn`'s signal this long before expiry when no extension landed. Default ttl/10, ≤ 1 s. */
  safetyMarginMs?: number;
  /** Told about extension failures that are being retried. */
  onRetry?: AutoExtendOptions['onRetry'];
  /**
   * Told when the final release fails. The failure never replaces `fn`'s outcome: the work is done
   * (or failed) either way, and an unreleased lease expires on its own after `ttlMs`.
   */
  onReleaseError?: (error: unknown) => void;
}

/**
 * Runs `fn` while holding the lock on `resource`:
 *
 * 1. acquires (waiting up to `waitMs`, cancellable by `signal`);
 * 2. extends the lease every `ttlMs × extendEveryFraction` while `fn` runs;
 * 3. aborts the signal handed to `fn` *before* the lease expires — when an extension fails for
 *    good, when none has landed `safetyMarginMs` before `validUntil`, when the lease is lost, or
 *    when the caller's `signal` aborts;
 * 4. always releases, and leaves no promise rejecting unobserved.
 *
 * Resolves with `fn`'s result. Rejects with `fn`'s error if it throws; with the `LockLostError`
 * if `fn` resolved only after its signal was aborted for a lease problem (its work may have run
 * unprotected, so a silent success would lie); with acquire's error if the lock was never held.
 * Pass `lease.fence` to the protected resource: only a fence check makes a lock safe against
 * pauses longer than the margin.
 */
export async function withLock<T, F extends Fence | undefined>(
  client: LockClient<F>,
  resource: string,
  fn: (lease: Lease<F>, signal: AbortSignal) => Promise<T> | T,
  options: WithLockOptions,
): Promise<T> {
  if (typeof fn !== 'function') throw new InvalidArgumentError('fn', fn, 'a function');
  // Check the extension settings before taking the lock, so bad options never leave it held.
  normalizeAutoExtend({ ...options, signal: undefined });
  const lease = await client.acquire(resource, {
    ttlMs: options.ttlMs,
    waitMs: options.waitMs,
    signal: options.signal,
  });
  const extension = autoExtend(lease, options);
  let outcome: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await fn(lease, extension.signal) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  const abortedForLease =
    extension.signal.aborted &&
    !(options.signal?.aborted && extension.signal.reason === options.signal.reason);
  const lostReason = abortedForLease ? extension.signal.reason : undefined;
  await extension.stop();
  const report = (error: unknown): void => {
    try {
      options.onReleaseError?.(error);
    } catch {
      // The observer's own failure must not replace fn's outcome either.
    }
  };
  const release = lease.release().catch(report);
  // A backend that stopped answering must not hold the caller: after one TTL the lease is gone anyway.
  if (!(await settleWithin(release, options.ttlMs)))
    report(new IndeterminateError(lease.resource, 'release'));
  if (!outcome.ok) throw outcome.error;
  if (lostReason !== undefined) {
    throw lostReason instanceof LockLostError
      ? lostReason
      : new LockLostError(lease.resource, 'the lease ended before fn finished', { cause: lostReason });
  }
  return outcome.value;
}
