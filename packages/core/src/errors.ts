import { redactText, redactValue, safeCause } from './redact.js';
import { escapeSteering } from './steering.js';

/**
 * Every failure fencekit reports is one of these. Each has a stable `code` (safe to switch on across
 * versions and processes), a fixed message that says what happened, the useful fields attached, and
 * the underlying error as `cause` where there is one.
 */
export type FencekitErrorCode =
  | 'timeout'
  | 'lost'
  | 'not-holder'
  | 'quorum'
  | 'stale-fence'
  | 'backend-unavailable'
  | 'indeterminate'
  | 'invalid-argument'
  | 'aborted'
  | 'closed'
  | 'unsupported';

export abstract class FencekitError extends Error {
  abstract readonly code: FencekitErrorCode;
  /**
   * Messages and causes are redacted here, once for every error: URL credentials (`user:pass@`)
   * leave the message, and a `cause` that is not itself a fencekit error is kept as a safe copy
   * (see `safeCause`), since a backend's error can carry the request that failed — password and all.
   * Bidi overrides and line separators are escaped too (`escapeSteering`), whatever text a message
   * interpolates (a resource name, a server's reply), so a message cannot reorder or forge log lines.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(
      escapeSteering(redactText(message)),
      options !== undefined && 'cause' in options
        ? { cause: options.cause instanceof FencekitError ? options.cause : safeCause(options.cause) }
        : undefined,
    );
  }
  override get name(): string {
    return this.constructor.name;
  }
}

/** The lock was not granted within `waitMs`. Nothing is left granted behind the caller. */
export class LockTimeoutError extends FencekitError {
  readonly code = 'timeout';
  constructor(
    readonly resource: string,
    readonly waitMs: number,
    options?: ErrorOptions,
  ) {
    super(`Timed out after ${waitMs} ms waiting for lock on "${resource}"`, options);
  }
}

/** The lease is gone (expired, taken over, session lost). Work done under it is no longer protected. */
export class LockLostError extends FencekitError {
  readonly code = 'lost';
  constructor(
    readonly resource: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`Lock on "${resource}" was lost: ${reason}`, options);
  }
}

/** The caller tried to release or extend a lock it does not hold (Curator: "You do not own the lock"). */
export class NotLockHolderError extends FencekitError {
  readonly code = 'not-holder';
  constructor(
    readonly resource: string,
    readonly owner: string,
    options?: ErrorOptions,
  ) {
    super(`You do not hold the lock on "${resource}" (owner ${owner})`, options);
  }
}

/** One node's part in a quorum decision. */
export interface NodeOutcome {
  readonly node: string;
  readonly ok: boolean;
  /** Why this node did not agree: "held by another owner", "timeout after 50 ms", "ECONNREFUSED"… */
  readonly reason?: string;
}

/** Too few nodes agreed. Says how many were needed, which answered and why the others did not. */
export class QuorumError extends FencekitError {
  readonly code = 'quorum';
  readonly failed: readonly NodeOutcome[];
  /** Each node's part; node names and reasons redacted (a node may be named by a URL with a password). */
  readonly outcomes: readonly NodeOutcome[];
  constructor(
    readonly resource: string,
    readonly needed: number,
    outcomes: readonly NodeOutcome[],
    options?: ErrorOptions,
  ) {
    const shown = outcomes.map(redactOutcome);
    const agreed = shown.filter((o) => o.ok).length;
    const failed = shown.filter((o) => !o.ok);
    const detail = failed.map((o) => `${o.node}: ${o.reason ?? 'refused'}`).join('; ');
    super(
      `Quorum not reached for "${resource}": ${agreed} of ${shown.length} nodes agreed, ${needed} needed` +
        (detail ? ` (${detail})` : ''),
      options,
    );
    this.outcomes = shown;
    this.failed = failed;
  }
}

function redactOutcome(outcome: NodeOutcome): NodeOutcome {
  const node = redactText(outcome.node);
  return outcome.reason === undefined
    ? { ...outcome, node }
    : { ...outcome, node, reason: redactText(outcome.reason) };
}

/** A fenced resource refused a write whose fence is not above the highest it has seen. */
export class StaleFenceError extends FencekitError {
  readonly code = 'stale-fence';
  constructor(
    readonly resource: string,
    readonly fence: bigint,
    readonly highestSeen: bigint | undefined,
    options?: ErrorOptions,
  ) {
    super(
      `Write to "${resource}" with fence ${fence} refused: fence ${highestSeen ?? '?'} was already seen`,
      options,
    );
  }
}

/** The backend could not be reached or answered with an error; the operation did not take effect. */
export class BackendUnavailableError extends FencekitError {
  readonly code = 'backend-unavailable';
  constructor(
    readonly backend: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`${backend} unavailable: ${detail}`, options);
  }
}

/**
 * The outcome is unknown: the request was sent but no answer came, so the lock may have been granted.
 * Implementations try to clean up (release by owner token) before throwing this; callers must not
 * assume they hold the lock, nor that nobody does.
 */
export class IndeterminateError extends FencekitError {
  readonly code = 'indeterminate';
  constructor(
    readonly resource: string,
    readonly operation: 'acquire' | 'extend' | 'release',
    options?: ErrorOptions,
  ) {
    super(`Outcome of ${operation} on "${resource}" is unknown: it may have taken effect`, options);
  }
}

/**
 * A caller passed a bad argument; names the argument, what it got and what was expected. `received`
 * is a redacted, bounded copy (`redactValue`), never the caller's object: a bad host list, options
 * object, `URL` or client instance may hold a password, and `util.inspect(error)` shows `received`.
 */
export class InvalidArgumentError extends FencekitError {
  readonly code = 'invalid-argument';
  readonly received: unknown;
  constructor(
    readonly argument: string,
    received: unknown,
    readonly expected: string,
  ) {
    const shown = redactValue(received);
    super(`Invalid ${argument}: got ${describe(shown, received)}, expected ${expected}`);
    this.received = shown;
  }
}

/** The caller's AbortSignal fired; `cause` is the signal's reason, as given. Nothing is left granted behind it. */
export class LockAbortedError extends FencekitError {
  readonly code = 'aborted';
  constructor(
    readonly resource: string,
    options?: ErrorOptions,
  ) {
    super(`Waiting for lock on "${resource}" was aborted`);
    // The caller's own value, not a backend's error: kept as it is (not a safe copy), so that a
    // caller can tell its own reason by identity.
    if (options !== undefined && 'cause' in options) {
      Object.defineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true });
    }
  }
}

/** The client was closed; no further operations are accepted. */
export class ClientClosedError extends FencekitError {
  readonly code = 'closed';
  constructor(readonly client: string) {
    super(`${client} is closed`);
  }
}

/**
 * The operation is not offered by this primitive (a read-write lease's upgrade or downgrade). Nothing
 * was changed: the lease stays as it was.
 */
export class UnsupportedOperationError extends FencekitError {
  readonly code = 'unsupported';
  constructor(
    readonly resource: string,
    readonly operation: string,
    readonly advice: string,
  ) {
    super(`${operation} on "${resource}" is not supported: ${advice}`);
  }
}

const ERROR_CODES = new Set<FencekitErrorCode>([
  'timeout',
  'lost',
  'not-holder',
  'quorum',
  'stale-fence',
  'backend-unavailable',
  'indeterminate',
  'invalid-argument',
  'aborted',
  'closed',
  'unsupported',
]);

function describe(value: unknown, received: unknown): string {
  // A description that `redactValue` put in place of an object or function (`[URL]`), not a string.
  if (typeof value === 'string' && typeof received !== 'string') return value;
  // The whole string redacted, then cut by quoteForMessage (which tells its full length).
  if (typeof received === 'string') return quoteForMessage(redactText(received));
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || value === undefined || typeof value !== 'object') return String(value);
  return Object.prototype.toString.call(value);
}

/**
 * A received string as it appears in a message: JSON-quoted (control characters and lone surrogates
 * escaped), DEL and C1 controls escaped too (JSON leaves them raw, and a terminal may act on them),
 * and cut after 100 characters, so a hostile or huge argument cannot flood or steer a log.
 */
function quoteForMessage(text: string): string {
  const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  const quoted = JSON.stringify(shown).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return text.length > 100 ? `${quoted} (${text.length} characters)` : quoted;
}

/** True for any fencekit error, optionally of one code. Works across duplicated package copies. */
export function isFencekitError(error: unknown, code?: FencekitErrorCode): error is FencekitError {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  const c = (error as { code: unknown }).code;
  if (!(error instanceof Error) || !ERROR_CODES.has(c as FencekitErrorCode)) return false;
  return code === undefined || c === code;
}
