import type { RedisClient as Redis } from './deployment.js';
import { errorMessage } from './failures.js';

interface ConnectionState {
  /** Whether the connection has ever been ready: until then ioredis writes no command to it. */
  everReady: boolean;
  /** The last connection error ioredis emitted since it was last ready (TLS, DNS, refused…). */
  lastError: string | undefined;
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
      created.everReady = true;
      created.lastError = undefined;
    };
    const created: ConnectionState = {
      everReady: redis.status === 'ready',
      lastError: undefined,
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
