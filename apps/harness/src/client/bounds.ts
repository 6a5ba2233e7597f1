import { CLOSE_BOUND_MS, DEFAULT_COMMAND_TIMEOUT_MS } from '@fencekit/redis';
import { closeBoundMs, RELEASE_TIMEOUT_MS, WAIT_OVERRUN_MS } from '@fencekit/redlock';
import { WAIT_REPLICAS } from '../backends/redis-replicated.js';
import type { BackendName } from '../backends/types.js';
import { zkSessionMs } from '../backends/zk.js';

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

/** @fencekit/redis README "Options": a stopped acquire settles within 250 ms; a grant is given back within 2 s. */
const REDIS_STOP_GRACE_MS = 250;
const REDIS_CANCEL_MS = 2_000;
/** @fencekit/etcd: `callTimeoutMs` default; the harness keeps it. */
const ETCD_CALL_MS = 5_000;
/** The memory backend's RPC answers a wait within `waitMs` + this (backends/remote-lock.ts). */
const MEMORY_ANSWER_SLACK_MS = 2_000;

/** `sessionMs`: the run's ZooKeeper session (`--session`), when set apart from the TTL. */
export function documentedBounds(backend: BackendName, ttlMs: number, sessionMs?: number): DocumentedBounds {
  switch (backend) {
    case 'redis':
    case 'redis-sentinel':
    case 'redis-cluster':
    case 'redis-sentinel-epoch':
    case 'redis-cluster-epoch':
      // README "Options": every request is bounded (5 s; the harness keeps the default), so an acquire
      // whose first request hangs fails after that request; close() has its own bound.
      return {
        acquireMs: (waitMs) => Math.max(waitMs, DEFAULT_COMMAND_TIMEOUT_MS),
        releaseMs: DEFAULT_COMMAND_TIMEOUT_MS,
        closeMs: CLOSE_BOUND_MS,
      };
    case 'redis-sentinel-wait':
    case 'redis-cluster-wait':
      // The same, and after the grant the replicas' WAIT, bounded by its timeout + the 5 s request bound
      // (README "Bounds": the caller's signal does not cut it short), then the grant given back (≤ 2 s) if too
      // few replicas acknowledged.
      return {
        acquireMs: (waitMs) =>
          Math.max(waitMs + REDIS_STOP_GRACE_MS, DEFAULT_COMMAND_TIMEOUT_MS) +
          WAIT_REPLICAS.timeoutMs +
          DEFAULT_COMMAND_TIMEOUT_MS +
          REDIS_CANCEL_MS,
        releaseMs: DEFAULT_COMMAND_TIMEOUT_MS,
        closeMs: CLOSE_BOUND_MS,
      };
    case 'redlock': {
      // README "Bounds", nt = the per-node timeout the harness sets (backends/redlock.ts): an acquire
      // settles by waitMs + WAIT_OVERRUN_MS once its first rounds (≤ 7 nt) are over.
      const nt = Math.max(50, Math.round(ttlMs / 5));
      return {
        acquireMs: (waitMs) => Math.max(waitMs, 7 * nt) + WAIT_OVERRUN_MS,
        releaseMs: RELEASE_TIMEOUT_MS,
        closeMs: closeBoundMs(nt),
      };
    }
    case 'etcd':
      // README "Time bounds": acquire within waitMs + callTimeoutMs, release within callTimeoutMs,
      // close() within 2 × callTimeoutMs (a request in flight, then the sessions' revokes together).
      return {
        acquireMs: (waitMs) => waitMs + ETCD_CALL_MS,
        releaseMs: ETCD_CALL_MS,
        closeMs: 2 * ETCD_CALL_MS,
      };
    case 'zk': {
      // Every call is bounded by the session timeout (backends/zk.ts sets it); close() releases,
      // then closes the session.
      const session = sessionMs ?? zkSessionMs(ttlMs);
      return {
        acquireMs: (waitMs) => waitMs + session,
        releaseMs: session,
        closeMs: 2 * session,
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
