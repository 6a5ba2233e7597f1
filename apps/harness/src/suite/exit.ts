import type { SuiteOutcome } from './suite.js';

/**
 * `fencekit suite`'s exit code: 0 when every run ran and its verdict is the one predicted; 1 when a
 * run's verdict differs from its prediction; 3 when a run failed or could not run (the suite is
 * incomplete: that outranks a mismatch). Usage errors exit 64 before anything runs.
 */
export function suiteExitCode(outcomes: readonly SuiteOutcome[]): 0 | 1 | 3 {
  if (outcomes.some((x) => x.error !== undefined || x.run === undefined)) return 3;
  return outcomes.every((x) => x.agrees) ? 0 : 1;
}
