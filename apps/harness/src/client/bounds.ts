import type { BackendName } from '../backends/types.js';

/**
 * The time bounds each adapter documents (its README's bounds section), with the settings the harness
 * connects with (backends/*.ts), as the harness records them on the ops (`value.boundMs`) for the
 * bounds check. Whatever the servers do, a call must settle within its bound (plus the check's slack).
 */
export interface DocumentedBounds {
  /** A blocking `acquire` with this `waitMs`. */
  acquireMs(waitMs: number): number;
  /** One `release()`. */
  releaseMs: number;
  /** `close()` of the client, with leases held, waiters queued and requests in flight. */
  closeMs: number;
}

/** @fencekit/redis: every request is bounded by 5 s; the harness keeps the default. */
const REDIS_REQUEST_MS = 5_000;
/** @fencekit/etcd: `callTimeoutMs` default; the harness keeps it. */
const ETCD_CALL_MS = 5_000;
/** The memory backend's RPC answers a wait within `waitMs` + this (backends/remote-lock.ts). */
const MEMORY_ANSWER_SLACK_MS = 2_000;

export function documentedBounds(backend: BackendName, ttlMs: number): DocumentedBounds {
  switch (backend) {
    case 'redis':
      // README "Bounds": an acquire whose first request hangs fails after that request's 5 s; close() ≤ 13 s.
      return {
        acquireMs: (waitMs) => Math.max(waitMs, REDIS_REQUEST_MS),
        releaseMs: REDIS_REQUEST_MS,
        closeMs: 13_000,
      };
    case 'redlock': {
      // README "Bounds", nt = the per-node timeout the harness sets (backends/redlock.ts): acquire settles
      // by waitMs + 250 ms once its first rounds (≤ 7 nt) are over; release ≤ 2 s;
      // close() ≤ max(7 nt + 2 s, 4 s) + 2 s + 1 s.
      const nt = Math.max(50, Math.round(ttlMs / 5));
      return {
        acquireMs: (waitMs) => Math.max(waitMs, 7 * nt) + 250,
        releaseMs: 2_000,
        closeMs: Math.max(7 * nt + 2_000, 4_000) + 3_000,
      };
    }
    case 'etcd':
      // README "Time bounds": acquire within waitMs + callTimeoutMs, release within callTimeoutMs,
      // close() within 4 × callTimeoutMs.
      return {
        acquireMs: (waitMs) => waitMs + ETCD_CALL_MS,
        releaseMs: ETCD_CALL_MS,
        closeMs: 4 * ETCD_CALL_MS,
      };
    case 'zk': {
      // A request unanswered for ⅔ of the session timeout suspends the connection and fails
      // (backends/zk.ts sets the session timeout); close() releases, then closes the session.
      const sessionMs = Math.max(1_000, ttlMs);
      return {
        acquireMs: (waitMs) => waitMs + sessionMs,
        releaseMs: sessionMs,
        closeMs: 2 * sessionMs,
      };
    }
    case 'memory':
      return {
        acquireMs: (waitMs) => waitMs + MEMORY_ANSWER_SLACK_MS,
        releaseMs: MEMORY_ANSWER_SLACK_MS,
        closeMs: MEMORY_ANSWER_SLACK_MS,
      };
  }
}
