import { type LockConformanceOptions, withCheckContext } from './context.js';
import type { LockCheck } from './lock-check.js';
import { freshGrantChecks } from './lock-checks-fresh.js';
import { lifecycleChecks } from './lock-checks-lifecycle.js';
import { nameChecks } from './lock-checks-names.js';
import { safetyChecks } from './lock-checks-safety.js';
import { waitingChecks } from './lock-checks-waiting.js';

/** Every check of the lock contract, in the order the suite runs them. */
export const lockChecks: readonly LockCheck[] = [
  ...safetyChecks,
  ...freshGrantChecks,
  ...waitingChecks,
  ...lifecycleChecks,
  ...nameChecks,
];

/** Finds a check by id; throws naming the known ids when there is none. */
export function lockCheck(id: string): LockCheck {
  const check = lockChecks.find((c) => c.id === id);
  if (!check) throw new Error(`No lock check "${id}"; known: ${lockChecks.map((c) => c.id).join(', ')}`);
  return check;
}

/**
 * Runs one check outside any test framework: resolves when the client conforms, rejects with the
 * assertion that failed. Ignores capabilities: the caller asked for this check explicitly.
 */
export function runLockCheck(id: string, options: LockConformanceOptions): Promise<void> {
  const check = lockCheck(id);
  return withCheckContext(options, (context) => check.run(context));
}
