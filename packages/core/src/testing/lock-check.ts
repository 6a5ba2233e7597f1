import type { CheckContext, ConformanceCapabilities } from './context.js';

/**
 * One conformance check: a named property of the contract, run against fresh clients. Exported so a
 * test can run a single check directly (e.g. to prove the suite catches a broken client).
 */
export interface LockCheck {
  /** Stable id, e.g. "stale-release-refused". */
  readonly id: string;
  /** What the check asserts, as the test title. */
  readonly title: string;
  /** Skipped when the backend lacks this capability. */
  readonly requires?: keyof ConformanceCapabilities;
  /** Resolves when the property holds; rejects with an AssertionError saying what went wrong. */
  run(context: CheckContext): Promise<void>;
}
