import {
  type Checker,
  type CheckResult,
  checkBounds,
  checkCron,
  checkElection,
  checkFences,
  checkInventory,
  checkLeases,
  checkLiveness,
  checkMutex,
  type HistoryEvent,
} from '@fencekit/checker';
import type { WorkloadName } from '../workloads/types.js';

export interface CheckPlan {
  workload: WorkloadName;
  /** The backend issues fences, so fence monotonicity can be judged. */
  fenced: boolean;
  initialStock: number;
  /** The run's lock TTL: sets the liveness bound. */
  ttlMs?: number;
  /** Client processes: lanes for the bounds check's fault exemptions. */
  clients?: number;
}

/**
 * How long waiters may wait in all, while the lock is free by every client's belief and no fault is in
 * force, before it counts as starvation: two TTLs, at least 2 s. Legitimate delays are shorter: a
 * holder's believed window ends before the server lets go by at most one TTL (ZooKeeper keeps a node for
 * the session timeout, which the harness sets to the TTL; Redis and Redlock keep a key until its own
 * TTL, counted from a later instant than the client's), plus wake-up and a loaded machine's scheduling.
 */
export function livenessBoundMs(ttlMs: number | undefined): number {
  return Math.max(2_000, 2 * (ttlMs ?? 0));
}

/** What the bounds check allows past any documented bound: the scheduler of two shared, loaded cores. */
export const BOUNDS_SLACK_MS = 1_000;

/**
 * Which of the checker package's lock checkers judge which workload. Most see only the resource's
 * view (what was accepted, when); fence monotonicity is judged wherever the backend hands out fences,
 * fencing on or off: with it off, an accepted stale write is exactly the evidence of a lost lock. The
 * `lease` check judges the clients' own beliefs instead (grants, `validUntil`, ends, recorded by every
 * lock workload's client): no two grants of one resource believed valid at once, whatever the fencing.
 */
type History = readonly HistoryEvent[];

/** The lock checkers' results have typed stats; the composition only needs the common shape. */
const judge =
  <V, S>(check: (history: History) => CheckResult<V, S>): Checker<History> =>
  (history) => {
    const result = check(history);
    return { ...result, stats: result.stats as unknown as Record<string, unknown> };
  };

export function checkersFor(plan: CheckPlan): Record<string, Checker<History>> {
  const fences: Record<string, Checker<History>> = plan.fenced ? { fences: judge(checkFences) } : {};
  const inventory = judge((h) => checkInventory(h, { initialStock: plan.initialStock }));
  const lease = judge((h) => checkLeases(h));
  // A healed fault gets one more bound to settle (a rejoining etcd member forces a leader election).
  const boundMs = livenessBoundMs(plan.ttlMs);
  const liveness = judge((h) => checkLiveness(h, { boundMs, settleMs: boundMs }));
  // Every client records its close() with its bound, so every workload has something to judge here.
  const bounds = judge((h) =>
    checkBounds(h, { slackMs: BOUNDS_SLACK_MS, ...(plan.clients ? { clients: plan.clients } : {}) }),
  );
  switch (plan.workload) {
    case 'inventory':
      return { inventory, ...fences, lease, liveness, bounds };
    case 'cas':
      return { inventory, bounds };
    case 'mutex':
      return { mutex: judge((h) => checkMutex(h)), ...fences, lease, liveness, bounds };
    case 'election':
      return { election: judge(checkElection), bounds };
    case 'cron':
      // Cron's workers never wait (one tryAcquire per tick): leases and bounds, no liveness.
      return { cron: judge((h) => checkCron(h)), lease, bounds };
  }
}
