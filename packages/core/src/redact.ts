/**
 * Credentials out of errors. Connection options carry passwords (`redis://user:pass@host`, etcd
 * `auth`), and backend clients keep them in places an error can reach: ioredis' `ReplyError` holds
 * the failed command with its arguments (`AUTH user password`), gRPC errors hold request metadata,
 * and a host URL with `user:pass@` ends up in messages. Errors are logged, inspected and written to
 * reports, so every fencekit error passes its message and `cause` through here (see `FencekitError`).
 */

import { escapeSteering } from './steering.js';

/** What a redacted secret reads as. */
export const REDACTED = '***';

/**
 * `text` with the user-info part of every URL (`redis://user:pass@host` → `redis://***@host`) and of
 * every bare `user:pass@host` (how etcd and ZooKeeper hosts are often written) replaced by `***`,
 * and so are secret query parameters (`?password=…`). A bare `name@host` without a colon (an e-mail
 * address) and `/@scope` paths are left alone.
 *
 * The user-info is found by structure, not by what a password may contain: it is everything from
 * the start of the authority (after `//`, or the start of a whitespace-delimited word for a bare
 * form) up to the last `@` before the next `/` or whitespace. RFC 3986 lets a password hold
 * `, ; ' ( ) ! $ & * + =` unencoded (and WHATWG URLs accept `[ ] | "` too), so splitting on
 * punctuation would cut a password in two and show its tail. Neither `/` nor whitespace can be in
 * user-info (they end the authority), so a boundary found this way never falls inside a password;
 * when unsure the redactor hides too much (a host listed before a credential), never too little.
 * Each character is visited a bounded number of times: linear, however hostile the text.
 */
export function redactText(text: string): string {
  return text.replace(WORD, redactWord).replace(SECRET_PARAMETER, `$1${REDACTED}`);
}

const WORD = /\S+/g;

// `?password=…` and the like in a URL's query (some clients read credentials from there).
const SECRET_PARAMETER = /([?&](?:password|pass|pwd|secret|token)=)[^&#\s]*/gi;

// Quotes and brackets that open a bare form inside JSON or `util.inspect` output (`["u:p@h"]`):
// kept in front of `***` for readability. They come before the first `:`, so never from a password.
const OPENERS = /^[[\](){}<>"'`\\,]*/;

function redactWord(word: string): string {
  if (!word.includes('@')) return word;
  const segments = word.split('/');
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    const at = segment.lastIndexOf('@');
    if (at <= 0) continue;
    const userinfo = segment.slice(0, at);
    // After `//` the segment is an authority: anything before its last `@` is user-info.
    const authority = i >= 2 && segments[i - 1] === '';
    if (authority) {
      segments[i] = `${REDACTED}${segment.slice(at)}`;
    } else if (userinfo.includes(':')) {
      const kept = (OPENERS.exec(userinfo) as RegExpExecArray)[0];
      segments[i] = `${kept}${REDACTED}${segment.slice(at)}`;
    }
  }
  return segments.join('/');
}

// Option names whose values are secrets, in any object a caller passed (`auth`, `password`, a TLS key…).
const SECRET_KEY = /pass(word)?|secret|token|private.?key|credential|^auth$/i;
const MAX_DEPTH = 4;

/** At most this many items of an array or fields of an object, and characters of a string, are kept. */
const MAX_ITEMS = 20;
const MAX_CHARS = 200;

/**
 * A bounded, redacted copy of a value a caller passed (as kept by `InvalidArgumentError.received`):
 * strings without URL credentials (cut after 200 characters, after redaction so a cut cannot split
 * a credential from its `@`), arrays and plain objects copied (20 items or fields at most) with
 * secret-named fields replaced by `***`. Any other object (a `URL`, a `Map`, a class instance, a
 * client such as an ioredis instance) is never kept: it is replaced by a description such as
 * `[URL]`, since its fields, getters and `util.inspect` output may hold a password (a `URL` keeps
 * `password`, an ioredis instance its `options`).
 */
export function redactValue(value: unknown, depth = 0): unknown {
  try {
    return redactValueOrThrow(value, depth);
  } catch {
    // A getter or proxy trap that throws (a hostile or exotic object) must not turn into another error here.
    return REDACTED;
  }
}

function redactValueOrThrow(value: unknown, depth: number): unknown {
  // Steering characters escaped too: util.inspect shows `received`, and leaves them raw.
  if (typeof value === 'string') return cut(escapeSteering(redactText(value)));
  if (typeof value === 'function') return '[function]';
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((item) => redactValue(item, depth + 1));
    if (value.length > MAX_ITEMS) items.push(`… (${value.length - MAX_ITEMS} more items)`);
    return items;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return describeInstance(proto);
  const copy: Record<string, unknown> = {};
  const entries = Object.entries(value);
  for (const [key, item] of entries.slice(0, MAX_ITEMS)) {
    copy[cut(redactText(key))] = SECRET_KEY.test(key) ? REDACTED : redactValue(item, depth + 1);
  }
  if (entries.length > MAX_ITEMS) copy['…'] = `${entries.length - MAX_ITEMS} more fields`;
  return copy;
}

function cut(text: string): string {
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}… (${text.length} characters)` : text;
}

/** `[URL]`, `[Map]`, `[Redis]`: the class's name only (a word), never the instance's content. */
function describeInstance(proto: object): string {
  const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && /^[\w$]{1,64}$/.test(name) ? `[${name}]` : '[object]';
}

/** Fields of a backend error that say what failed without carrying request data. */
const SAFE_FIELDS = ['code', 'errno', 'syscall', 'address', 'port', 'details', 'operation', 'path'];

/**
 * A safe copy of an error kept as `cause`: same class (so `instanceof` and the printed name still
 * work), message, stack, `code` and a few fields naming what failed (all text redacted), and a safe
 * copy of its own `cause` — but none of the other fields, such as ioredis' `command` with its
 * arguments or a gRPC error's metadata. Values that are not errors go through `redactValue`.
 */
export function safeCause(cause: unknown, depth = 0): unknown {
  if (!(cause instanceof Error)) return redactValue(cause, depth);
  if (depth >= MAX_DEPTH) return new Error(`${REDACTED} (cause chain cut at depth ${MAX_DEPTH})`);
  try {
    return copyError(cause, depth);
  } catch {
    // An error whose fields throw when read: say so rather than fail building the outer error.
    return new Error(`${REDACTED} (the cause could not be read)`);
  }
}

function copyError(cause: Error, depth: number): Error {
  const copy = Object.create(Object.getPrototypeOf(cause)) as Error;
  // Own, non-enumerable like the originals: defined, not assigned, since some error classes
  // (DOMException) have accessors for these on the prototype that only work on real instances.
  const define = (key: string, value: unknown, enumerable = false): void => {
    Object.defineProperty(copy, key, { value, enumerable, writable: true, configurable: true });
  };
  define('name', String(cause.name));
  define('message', redactText(String(cause.message)));
  if (typeof cause.stack === 'string') define('stack', redactText(cause.stack));
  const fields = cause as unknown as Record<string, unknown>;
  for (const key of SAFE_FIELDS) {
    const value = fields[key];
    if (typeof value === 'string') define(key, redactText(value), true);
    else if (typeof value === 'number' || typeof value === 'boolean') define(key, value, true);
  }
  if (Array.isArray(fields.errors)) {
    define(
      'errors',
      fields.errors.map((error) => safeCause(error, depth + 1)),
    );
  }
  if ('cause' in cause) define('cause', safeCause(cause.cause, depth + 1));
  return copy;
}
