import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../run/run.js';
import type { SuiteEntry } from './matrix.js';

/** What results.json says of one checker, as far as a prediction reads it. */
interface CheckerSeen {
  verdict?: unknown;
}

/**
 * Whether a run agrees with its cell's prediction. A verdict prediction compares the run's verdict; `report`
 * always agrees; `fences-ok` reads the fences checker alone: the lock may still be held twice (the lease or mutex
 * check convicts that), but no fence was granted twice and no stale write landed. That is the promise of the
 * epoch fences on replicated Redis (#17), where two holders are expected and only the fence saves the resource.
 * A run whose faults were not all applied, or whose history is incomplete, cannot show that promise held.
 */
export function agreesWithPrediction(entry: SuiteEntry, run: RunSummary): boolean {
  if (entry.expect === 'report') return true;
  if (entry.expect !== 'fences-ok') return entry.expect === run.verdict;
  const checkers = checkersOf(run);
  if (checkers === undefined) return false;
  const unsure = ['fault-effects', 'completeness'].some((name) => checkers[name]?.verdict === 'unknown');
  return !unsure && checkers.fences?.verdict === 'ok';
}

function checkersOf(run: RunSummary): Record<string, CheckerSeen | undefined> | undefined {
  try {
    const results = JSON.parse(readFileSync(join(run.dir, 'results.json'), 'utf8')) as { checkers?: unknown };
    const checkers = results.checkers;
    return typeof checkers === 'object' && checkers !== null
      ? (checkers as Record<string, CheckerSeen | undefined>)
      : undefined;
  } catch {
    // No results (the run failed before its check): nothing agrees.
    return undefined;
  }
}
