export { monotonicNow, validUntilFrom } from './clock.js';
export type {
  AcquireOptions,
  CampaignOptions,
  Election,
  ElectionClient,
  ExtendOptions,
  Fence,
  LeaderInfo,
  Leadership,
  Lease,
  LockCapabilities,
  LockClient,
  TryAcquireOptions,
} from './contract.js';
export {
  BackendUnavailableError,
  ClientClosedError,
  FencekitError,
  type FencekitErrorCode,
  IndeterminateError,
  InvalidArgumentError,
  isFencekitError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  type NodeOutcome,
  NotLockHolderError,
  QuorumError,
  StaleFenceError,
} from './errors.js';
export { type GrantedLease, type LeaseOperations, ManagedLease } from './lease.js';
export {
  assertNonNegativeMs,
  assertPositiveMs,
  assertResource,
  assertSignal,
  DEFAULT_WAIT_MS,
  normalizeAcquire,
} from './validate.js';
