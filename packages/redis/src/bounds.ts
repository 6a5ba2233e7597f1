import { DEFAULT_COMMAND_TIMEOUT_MS, QUIT_TIMEOUT_MS } from './connection.js';

/** Bounds the best-effort clean-up after a failed or cancelled acquire. */
export const CANCEL_TIMEOUT_MS = 2_000;

/**
 * The longest `RedisLockClient.close()` can take, whatever the server does (README, "Options"): the
 * work in flight ends (a request, 5 s, then its clean-up, 2 s), the held leases are released side by
 * side (5 s), then both connections are QUIT side by side, destroyed after 1 s without an answer.
 */
export const CLOSE_BOUND_MS =
  DEFAULT_COMMAND_TIMEOUT_MS + CANCEL_TIMEOUT_MS + DEFAULT_COMMAND_TIMEOUT_MS + QUIT_TIMEOUT_MS;
