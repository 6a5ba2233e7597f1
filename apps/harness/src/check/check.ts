import {
  type CheckResult,
  composeVerdicts,
  type HistoryEvent,
  runCheckers,
  type Verdict,
} from '@fencekit/checker';
import { type CheckPlan, checkersFor } from './checkers.js';

/** Violations kept per checker in results.json (all are counted). */
const KEEP_VIOLATIONS = 50;

export interface CheckerReport {
  verdict: Verdict;
  violationCount: number;
  violations: unknown[];
  stats: unknown;
  error?: string;
  /**
   * What the checker reports beside its verdict, for the run page (the fences checker: fences the lock granted
   * twice, each also a `reissued` violation, and whether the resource refused every stale one: "fencing held").
   */
  findings?: string[];
}

export interface CheckOutcome {
  verdict: Verdict;
  /** Why the verdict cannot be `ok` regardless of the checkers (incomplete history, crashed client). */
  problems: string[];
  checkers: Record<string, CheckerReport>;
}

/**
 * Runs the workload's checkers and composes their verdicts (illegal > unknown > ok). An incomplete
 * history adds an `unknown` of its own: missing lines could hide a violation, so such a run can be
 * convicted but never cleared.
 */
export async function checkHistory(
  plan: CheckPlan,
  history: readonly HistoryEvent[],
  problems: readonly string[],
): Promise<CheckOutcome> {
  const { results } = await runCheckers(checkersFor(plan), history);
  const checkers: Record<string, CheckerReport> = {};
  for (const [name, result] of Object.entries(results)) checkers[name] = summarise(result);
  if (problems.length > 0) {
    checkers.completeness = {
      verdict: 'unknown',
      violationCount: 0,
      violations: [],
      stats: { problems: problems.length },
      error: `history incomplete: ${problems.join('; ')}`,
    };
  }
  if (Object.keys(results).length === 0) {
    checkers.none = {
      verdict: 'unknown',
      violationCount: 0,
      violations: [],
      stats: {},
      error: 'no checker ran',
    };
  }
  const verdict = composeVerdicts(Object.values(checkers).map((c) => c.verdict));
  return { verdict, problems: [...problems], checkers };
}

function summarise(result: CheckResult): CheckerReport {
  return {
    verdict: result.verdict,
    violationCount: result.violations.length,
    violations: result.violations.slice(0, KEEP_VIOLATIONS),
    stats: result.stats,
    ...(result.error ? { error: result.error } : {}),
    ...findingsOf(result),
  };
}

/** A checker's `findings` (strings), when it returned any: only some checkers do (see CheckerReport). */
function findingsOf(result: CheckResult): { findings?: string[] } {
  const findings = (result as { findings?: unknown }).findings;
  if (!Array.isArray(findings)) return {};
  const texts = findings.filter((f): f is string => typeof f === 'string');
  return texts.length > 0 ? { findings: texts } : {};
}

export type { CheckPlan };
