/**
 * `@fencekit/core/testing`: the conformance suite every fencekit backend runs. Import it only from
 * tests; it needs `vitest` (an optional peer dependency) for `describe`/`it`. The checks themselves
 * use `node:assert`, so `runLockCheck` works without Vitest's runner.
 */
export {
  type CheckContext,
  type ConformanceCapabilities,
  DEFAULT_CAPABILITIES,
  DEFAULT_LEAK_TYPES,
  type LockConformanceOptions,
} from './context.js';
export { describeElectionConformance, describeLockConformance } from './describe.js';
export {
  type ElectionCheck,
  type ElectionCheckContext,
  type ElectionConformanceOptions,
  type ElectionRequirement,
  electionChecks,
  runElectionCheck,
} from './election-checks.js';
export type { LockCheck } from './lock-check.js';
export { lockCheck, lockChecks, runLockCheck } from './lock-checks.js';
export { readWriteLockChecks } from './rwlock-checks.js';
export { assertNoSecret, renderEverywhere } from './secrets.js';
export { semaphoreChecks } from './semaphore-checks.js';
export type {
  SharedCapabilities,
  SharedCheck,
  SharedCheckContext,
  SharedConformanceOptions,
} from './shared-context.js';
export {
  describeReadWriteLockConformance,
  describeSemaphoreConformance,
  runReadWriteLockCheck,
  runSemaphoreCheck,
} from './shared-describe.js';
