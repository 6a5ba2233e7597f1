import { QUIT_TIMEOUT_MS, STOP_GRACE_MS } from '@fencekit/redis/internal';

/**
 * The time bounds Redlock documents (README, "Bounds"), in one place so the constants the client
 * uses and the bounds its tests check cannot drift apart. Every wait on a node is bounded by one of
 * these or by the per-node timeout, whatever the node does (down, stopped with its socket open, cut off).
 */

/** Bounds the best-effort give-back after a failed round and a waiter leaving the queues. */
export const CANCEL_TIMEOUT_MS = 2_000;
/** A release eats no validity, so it may wait longer than an acquire for slow nodes. */
export const RELEASE_TIMEOUT_MS = 2_000;
/** How long close() waits for a released lease's slowest nodes to answer. */
export const RELEASE_STRAGGLERS_MS = 2_000;

/**
 * How long past `waitMs` (or the caller's abort) an `acquire` may take to settle, once its first
 * round is over: the clean-up (the round in flight, then leaving every queue) goes on in the
 * background, and `close()` waits for it.
 */
export const WAIT_OVERRUN_MS = STOP_GRACE_MS;

/**
 * The longest `close()` can take with per-node timeout `nodeTimeoutMs`, whatever the nodes do. First
 * the work in flight ends: an acquire's rounds before it parks (at most 7 per-node timeouts) and its
 * give-back, or a release the caller started (its own bound, then its slowest nodes'); then the held
 * leases are released; then the connections are QUIT, or destroyed when a node does not answer.
 */
export function closeBoundMs(nodeTimeoutMs: number): number {
  const inFlight = Math.max(
    7 * nodeTimeoutMs + CANCEL_TIMEOUT_MS,
    RELEASE_TIMEOUT_MS + RELEASE_STRAGGLERS_MS,
  );
  return inFlight + RELEASE_TIMEOUT_MS + QUIT_TIMEOUT_MS;
}
