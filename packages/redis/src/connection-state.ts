import type { RedisClient as Redis } from './deployment.js';
import { errorMessage } from './failures.js';

interface ConnectionState {
  /** Whether the connection has ever been ready: until then ioredis writes no command to it. */
  everReady: boolean;
  /** The last connection error ioredis emitted since it was last ready (TLS, DNS, refused…). */
  lastError: string | undefined;
  /** How many times it has become ready: a call that saw no change was never written (see `notSentReason`). */
  readies: number;
  /** How many trackers follow it: several clients may share one caller-owned instance. */
  trackers: number;
  untrack(): void;
}

const states = new WeakMap<Redis, ConnectionState>();

/**
 * Follows a connection's 'ready' and 'error' events, so a failed command can say why the
 * connection is down and whether the command can have been sent at all. Returns the undo: a
 * connection the caller owns outlives the client and must not keep its listeners.
 */
export function trackConnectionState(redis: Redis): () => void {
  // One state per connection, shared: a second client on the same instance must not start it
  // over (it would think a connection that served the first one had never been ready).
  let state = states.get(redis);
  if (state === undefined) {
    const onError = (error: unknown): void => {
      created.lastError = errorMessage(error);
    };
    const onReady = (): void => {
      created.readies += 1;
      created.everReady = true;
      created.lastError = undefined;
    };
    const created: ConnectionState = {
      everReady: redis.status === 'ready',
      lastError: undefined,
      readies: 0,
      trackers: 0,
      untrack: () => {
        redis.off('error', onError);
        redis.off('ready', onReady);
        states.delete(redis);
      },
    };
    redis.on('error', onError);
    redis.on('ready', onReady);
    states.set(redis, created);
    state = created;
  }
  const tracked = state;
  tracked.trackers += 1;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    tracked.trackers -= 1;
    if (tracked.trackers === 0) tracked.untrack();
  };
}

/** The last connection error since the connection was last ready, if it is tracked and had one. */
export function lastConnectionError(redis: Redis): string | undefined {
  return states.get(redis)?.lastError;
}

/**
 * Why nothing can have been sent on a tracked connection that has never been ready (ioredis only
 * queues commands until then), or undefined when it was ready once or is not tracked.
 */
export function neverConnectedReason(redis: Redis, name: string): string | undefined {
  const state = states.get(redis);
  if (state === undefined || state.everReady) return undefined;
  return `could not connect to ${name}${state.lastError === undefined ? '' : `: ${state.lastError}`}`;
}

/** A connection's state when a call began, for `notSentReason`. */
export interface ConnectionMark {
  readonly ready: boolean;
  readonly readies: number;
}

/** Where a tracked connection stands now (undefined if it is not tracked). */
export function connectionMark(redis: Redis): ConnectionMark | undefined {
  const state = states.get(redis);
  return state === undefined ? undefined : { ready: redis.status === 'ready', readies: state.readies };
}

/** What a server says when it refuses the password or user (AUTH, HELLO, or a command without them). */
const AUTH_FAILURE = /WRONGPASS|NOAUTH|invalid password|invalid username-password|AUTH failed/i;

export function isAuthFailure(message: string): boolean {
  return AUTH_FAILURE.test(message);
}

/**
 * Why a call that failed cannot have been sent, or undefined when it may have been. ioredis writes a
 * command only on a ready connection (until then it waits in the offline queue, and is failed from
 * there when the connection closes or retries run out): a call begun while the connection was not
 * ready, which has not been ready since (ioredis emits 'ready' before any reply to what it then
 * writes could arrive), was never written. After a password change, each reconnection is refused
 * (WRONGPASS) and such a call used to be reported as "may have taken effect".
 */
export function notSentReason(
  redis: Redis,
  name: string,
  mark: ConnectionMark | undefined,
): string | undefined {
  const state = states.get(redis);
  if (mark === undefined || mark.ready || state === undefined || state.readies !== mark.readies)
    return undefined;
  const last = state.lastError;
  if (last !== undefined && isAuthFailure(last)) return `authentication to ${name} failed: ${last}`;
  return `not connected to ${name}${last === undefined ? '' : `: ${last}`}`;
}
