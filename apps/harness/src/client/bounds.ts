import type { BackendName } from '../backends/types.js';

/**
 * The time bounds a careful user may count on, per backend, as the harness records them on `release`
 * and `close` ops (`value.boundMs`) for the checker's bounds check. An acquire's bound is its own
 * `waitMs` (the contract). The figures are the adapters' per-call bounds with the settings the harness
 * connects with (backends/*.ts); where an adapter documents no figure, the one its code enforces.
 */
export interface DocumentedBounds {
  /** One `release()`. */
  releaseMs: number;
  /** `close()` of the client, with leases still held or waiters queued. */
  closeMs: number;
}

/** Redis: every lock command is bounded by 5 s (`DEFAULT_COMMAND_TIMEOUT_MS`); etcd's `callTimeoutMs` default is 5 s too. */
const CALL_MS = 5_000;
/** Redlock's close() waits this long for a released lease's slowest nodes (`RELEASE_STRAGGLERS_MS`). */
const REDLOCK_STRAGGLERS_MS = 2_000;

export function documentedBounds(backend: BackendName, ttlMs: number): DocumentedBounds {
  switch (backend) {
    case 'redlock': {
      // The harness's per-node timeout (backends/redlock.ts); a release needs one round, maybe a retry.
      const nodeMs = Math.max(50, Math.round(ttlMs / 5));
      return { releaseMs: 2 * nodeMs, closeMs: REDLOCK_STRAGGLERS_MS + 2 * nodeMs };
    }
    case 'zk': {
      // A request unanswered fails when the session's connection is declared lost (backends/zk.ts).
      const sessionMs = Math.max(1_000, ttlMs);
      return { releaseMs: sessionMs, closeMs: 2 * sessionMs };
    }
    case 'etcd':
      // close() releases, withdraws and revokes: two rounds of calls.
      return { releaseMs: CALL_MS, closeMs: 2 * CALL_MS };
    case 'redis':
    case 'memory':
      return { releaseMs: CALL_MS, closeMs: CALL_MS };
  }
}
