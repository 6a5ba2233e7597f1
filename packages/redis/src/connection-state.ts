import type { Redis } from 'ioredis';
import { errorMessage } from './failures.js';

interface ConnectionState {
  /** Whether the connection has ever been ready: until then ioredis writes no command to it. */
  everReady: boolean;
  /** The last connection error ioredis emitted since it was last ready (TLS, DNS, refused…). */
  lastError: string | undefined;
}

const states = new WeakMap<Redis, ConnectionState>();

/**
 * Follows a connection's 'ready' and 'error' events, so a failed command can say why the
 * connection is down and whether the command can have been sent at all. Returns the undo: a
 * connection the caller owns outlives the client and must not keep its listeners.
 */
export function trackConnectionState(redis: Redis): () => void {
  const state: ConnectionState = { everReady: redis.status === 'ready', lastError: undefined };
  states.set(redis, state);
  const onError = (error: unknown): void => {
    state.lastError = errorMessage(error);
  };
  const onReady = (): void => {
    state.everReady = true;
    state.lastError = undefined;
  };
  redis.on('error', onError);
  redis.on('ready', onReady);
  return () => {
    redis.off('error', onError);
    redis.off('ready', onReady);
    states.delete(redis);
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
