import { sleep } from './abort.js';
import { monotonicNow } from './clock.js';
import { InvalidArgumentError } from './errors.js';
import { assertNonNegativeMs, assertPositiveMs } from './validate.js';

/**
 * Capped exponential backoff with full jitter: attempt n waits a uniformly random time in
 * [0, min(capMs, baseMs × 2ⁿ)). Full jitter spreads retrying clients out best (AWS Architecture
 * Blog, "Exponential Backoff And Jitter"), so waiters of one lock do not retry in lockstep.
 */
export interface BackoffOptions {
  /** Ceiling of the first attempt's delay. Default 25 ms. */
  baseMs?: number;
  /** Largest ceiling any attempt may have. Default 1 000 ms. */
  capMs?: number;
  /** Source of randomness in [0, 1); injectable for tests. Default `Math.random`. */
  random?: () => number;
}

/** The delay before retry number `attempt` (0-based). */
export function fullJitterDelay(attempt: number, options: BackoffOptions = {}): number {
  if (!Number.isInteger(attempt) || attempt < 0) {
    throw new InvalidArgumentError('attempt', attempt, 'a non-negative integer');
  }
  const { baseMs, capMs, random } = resolve(options);
  // 2^attempt overflows to Infinity for large attempts; min() with the cap keeps it finite.
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return random() * ceiling;
}

/** A running backoff: each `next()` is one more attempt; `reset()` after a success. */
export class Backoff {
  readonly #options: Required<BackoffOptions>;
  #attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.#options = resolve(options);
  }

  /** Attempts made since the last reset. */
  get attempt(): number {
    return this.#attempt;
  }

  /** The next delay, and counts the attempt. */
  next(): number {
    const delay = fullJitterDelay(this.#attempt, this.#options);
    this.#attempt += 1;
    return delay;
  }

  reset(): void {
    this.#attempt = 0;
  }

  /**
   * Sleeps the next delay, never past `deadline` (a `monotonicNow()` instant) and never past an
   * abort of `signal` (rejects with its reason). Resolves `false` when the deadline has been
   * reached, so a caller's loop can stop without a separate clock check.
   */
  async wait(signal?: AbortSignal, deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
    const remaining = deadline - monotonicNow();
    if (remaining <= 0) return false;
    const delay = this.next();
    // Decided before sleeping: a timer may fire a hair early against performance.now().
    const reachesDeadline = delay >= remaining;
    await sleep(reachesDeadline ? remaining : delay, signal);
    return !reachesDeadline && monotonicNow() < deadline;
  }
}

function resolve(options: BackoffOptions): Required<BackoffOptions> {
  const baseMs = options.baseMs ?? 25;
  const capMs = options.capMs ?? 1_000;
  assertPositiveMs('baseMs', baseMs);
  assertNonNegativeMs('capMs', capMs);
  if (capMs < baseMs) throw new InvalidArgumentError('capMs', capMs, `at least baseMs (${baseMs})`);
  const random = options.random ?? Math.random;
  if (typeof random !== 'function') throw new InvalidArgumentError('random', random, 'a function');
  return { baseMs, capMs, random };
}
