export { type BudgetOptions, CheckBudgetError } from './budget.js';
export { type CronOptions, type CronResult, type CronStats, checkCron, type DuplicateRun } from './cron.js';
export {
  checkElection,
  type ElectionCheckOptions,
  type ElectionResult,
  type ElectionStats,
  type ElectionViolation,
  type Reign,
} from './election.js';
export { LockHistoryError } from './errors.js';
export * from './events.js';
export {
  type AcceptedFenceViolation,
  checkFences,
  type FenceResult,
  type FenceStats,
  type FenceViolation,
  type ReissuedFenceViolation,
} from './fence.js';
export {
  checkInventory,
  type InventoryOptions,
  type InventoryResult,
  type InventoryStats,
  type InventoryViolation,
} from './inventory.js';
export {
  checkLeases,
  type LeaseCheckOptions,
  type LeaseResult,
  type LeaseStats,
  type LeaseViolation,
} from './lease.js';
export {
  type BoundsOptions,
  type BoundsResult,
  type BoundsStats,
  checkBounds,
  DEFAULT_CLIENT_PAUSES,
  type OverranViolation,
} from './lease-bounds.js';
export { type FaultWindow, faultWindows } from './lease-faults.js';
export {
  DEFAULT_RELEASE_OPS,
  type LeaseFactOptions,
  type LeaseFacts,
  type LeaseWindow,
  leaseWindows,
} from './lease-history.js';
export {
  checkLiveness,
  type LivenessOptions,
  type LivenessResult,
  type LivenessStats,
  type StarvedViolation,
} from './lease-liveness.js';
export {
  type CriticalSection,
  checkMutex,
  criticalSections,
  type MutexCheckOptions,
  type MutexResult,
  type MutexStats,
} from './mutex.js';
export {
  checkReadWriteLeases,
  checkReadWriteLock,
  type ReadWriteCheckOptions,
  type ReadWriteResult,
  type ReadWriteStats,
  type ReadWriteViolation,
} from './rwlock.js';
export {
  checkSemaphore,
  checkSemaphoreLeases,
  type SemaphoreCheckOptions,
  type SemaphoreResult,
  type SemaphoreStats,
  type SemaphoreViolation,
} from './semaphore.js';
export type { HolderMode, Holding } from './shared-holders.js';
