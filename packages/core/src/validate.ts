import { InvalidArgumentError } from './errors.js';
import { STEERING } from './steering.js';

/**
 * Resource names: non-empty, well-formed strings of at most 512 printable characters. A lone UTF-16
 * surrogate is refused here, for every backend: etcd and ZooKeeper encode names into keys and paths
 * (`encodeURIComponent` throws a raw `URIError` on one), and Redis would store a replacement character.
 */
export function assertResource(resource: unknown): asserts resource is string {
  if (
    typeof resource !== 'string' ||
    resource.length === 0 ||
    resource.length > 512 ||
    NOT_PRINTABLE.test(resource)
  ) {
    throw new InvalidArgumentError(
      'resource',
      resource,
      'a non-empty string of at most 512 printable characters',
    );
  }
}

/**
 * A key or path the caller names for a guarded write: a non-empty string that UTF-8 can encode. A
 * lone surrogate cannot be: `Buffer.from` would write U+FFFD instead, to another key than the one
 * named. (Control characters are left to the backend: keys are bytes there.)
 */
export function assertEncodableKey(argument: string, key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0 || LONE_SURROGATE.test(key)) {
    throw new InvalidArgumentError(argument, key, 'a non-empty string without lone surrogates');
  }
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Election candidates: non-empty, well-formed, printable strings. A candidate is stored as UTF-8 and
 * read back by `leader()` and `observe()`: a lone surrogate would come back as U+FFFD (another name),
 * and control characters would reach every log that prints the leader.
 */
export function assertCandidate(candidate: unknown): asserts candidate is string {
  if (typeof candidate !== 'string' || candidate.length === 0 || NOT_PRINTABLE.test(candidate)) {
    throw new InvalidArgumentError('candidate', candidate, 'a non-empty string of printable characters');
  }
}

/**
 * The longest duration a Node.js timer can wait (about 24.8 days). Beyond it `setTimeout` fires
 * after 1 ms, so a longer wait or TTL would end at once instead of late.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A strictly positive, finite duration in milliseconds, at most `MAX_TIMER_MS`. */
export function assertPositiveMs(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(name, value, 'a positive finite number of milliseconds');
  }
  assertTimerRange(name, value);
}

/**
 * A lease or queue-entry TTL: a whole number of milliseconds from 1 to `MAX_TIMER_MS`. Servers
 * take TTLs as integers (Redis' PX refuses 1500.5, and would refuse it only after a script had
 * begun writing), so a fraction is refused here, before anything is sent.
 */
export function assertTtlMs(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidArgumentError(name, value, 'a positive whole number of milliseconds');
  }
  assertTimerRange(name, value);
}

function assertTimerRange(name: string, value: number): void {
  if (value > MAX_TIMER_MS) {
    throw new InvalidArgumentError(
      name,
      value,
      `at most ${MAX_TIMER_MS} ms (about 24.8 days, the timer limit)`,
    );
  }
}

/** A non-negative, finite duration in milliseconds, at most `MAX_TIMER_MS`. */
export function assertNonNegativeMs(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(name, value, 'a non-negative finite number of milliseconds');
  }
  assertTimerRange(name, value);
}

export function assertSignal(name: string, value: unknown): asserts value is AbortSignal | undefined {
  if (value !== undefined && !(value instanceof AbortSignal)) {
    throw new InvalidArgumentError(name, value, 'an AbortSignal or undefined');
  }
}

/** Default bound on every wait, so no acquire or campaign hangs forever. */
export const DEFAULT_WAIT_MS = 30_000;

/** Validates `acquire` options and fills the default wait. */
export function normalizeAcquire(
  resource: unknown,
  options: { ttlMs?: unknown; waitMs?: unknown; signal?: unknown } | undefined,
): { resource: string; ttlMs: number; waitMs: number; signal: AbortSignal | undefined } {
  assertResource(resource);
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with ttlMs');
  }
  assertTtlMs('ttlMs', options.ttlMs);
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  assertNonNegativeMs('waitMs', waitMs);
  assertSignal('signal', options.signal);
  return { resource, ttlMs: options.ttlMs, waitMs, signal: options.signal };
}

/**
 * Control characters (C0, DEL, C1), with the `u` flag (where a pair is one code point) lone
 * surrogates, and the characters that steer display (bidi overrides, U+2028/U+2029: `STEERING`),
 * which would reorder or break every message and log line that shows the name.
 */
const NOT_PRINTABLE = new RegExp(`[\\p{Cc}\\p{Cs}${STEERING.source.slice(1, -1)}]`, 'u');

/** Validates `tryAcquire` options. */
export function normalizeTryAcquire(
  resource: unknown,
  options: { ttlMs?: unknown; signal?: unknown } | undefined,
): { resource: string; ttlMs: number; signal: AbortSignal | undefined } {
  assertResource(resource);
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with ttlMs');
  }
  assertTtlMs('ttlMs', options.ttlMs);
  assertSignal('signal', options.signal);
  return { resource, ttlMs: options.ttlMs, signal: options.signal };
}

/**
 * The most permits a semaphore may have. Permits are counted as Lua numbers on Redis and as integers
 * elsewhere; a million keeps every sum exact and is far beyond any sensible limit. A read-write lock
 * uses it as its capacity: a writer takes all of it, a reader one.
 */
export const MAX_PERMITS = 1_000_000;

/** A permit count: a whole number from 1 to `max`. */
export function assertPermits(name: string, value: unknown, max = MAX_PERMITS): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(name, value, `a whole number of permits from 1 to ${max}`);
  }
}
