import {
  type Checker,
  type CheckResult,
  checkCron,
  checkElection,
  checkFences,
  checkInventory,
  checkLeases,
  checkMutex,
  type HistoryEvent,
} from '@fencekit/checker';
import type { WorkloadName } from '../workloads/types.js';

export interface CheckPlan {
  workload: WorkloadName;
  /** The backend issues fences, so fence monotonicity can be judged. */
  fenced: boolean;
  initialStock: number;
}

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
  switch (plan.workload) {
    case 'inventory':
      return { inventory, ...fences, lease };
    case 'cas':
      return { inventory };
    case 'mutex':
      return { mutex: judge((h) => checkMutex(h)), ...fences, lease };
    case 'election':
      return { election: judge(checkElection) };
    case 'cron':
      return { cron: judge((h) => checkCron(h)), lease };
  }
}
