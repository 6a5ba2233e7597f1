export {
  type AbortLike,
  abortedPromise,
  abortReason,
  combineSignals,
  type DisposableSignal,
  deadlineSignal,
  settleWithin,
  sleep,
} from './abort.js';
export {
  type AutoExtendHandle,
  type AutoExtendOptions,
  autoExtend,
  normalizeAutoExtend,
} from './auto-extend.js';
export { Backoff, type BackoffOptions, fullJitterDelay } from './backoff.js';
export { ClientLifecycle } from './client-lifecycle.js';
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
export type {
  ReadWriteLease,
  ReadWriteLock,
  ReadWriteLockClient,
  ReadWriteMode,
  Semaphore,
  SemaphoreAcquireOptions,
  SemaphoreClient,
  SemaphoreLease,
  SemaphoreOptions,
  SemaphoreTryAcquireOptions,
} from './contract-shared.js';
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
  UnsupportedOperationError,
} from './errors.js';
export {
  assertFencedWrite,
  type FencedRecord,
  type FencedResource,
  type FencedResourceOptions,
  MemoryFencedResource,
} from './fenced-resource.js';
export {
  freshLease,
  type GrantedLease,
  type LeaseOperations,
  ManagedLease,
  type ValidityCap,
} from './lease.js';
export {
  createMemoryElectionClient,
  defaultMemoryElectionHub,
  MemoryElection,
} from './memory-election.js';
export { type MemoryCandidacy, MemoryElectionHub } from './memory-election-hub.js';
export {
  createMemoryLockClient,
  defaultMemoryLockServer,
  MemoryLockClient,
  type MemoryLockClientOptions,
} from './memory-lock-client.js';
export { type MemoryGrant, MemoryLockServer, type MemoryReleaseOutcome } from './memory-lock-server.js';
export { MemoryPermitServer, type PermitGrant } from './memory-permit-server.js';
export {
  createMemorySharedLockClient,
  defaultMemoryPermitServer,
  MemorySharedLockClient,
  type MemorySharedLockClientOptions,
} from './memory-shared-lock-client.js';
export { readWriteLockOf, readWriteWeight } from './read-write-lock.js';
export { REDACTED, redactText, redactValue, safeCause } from './redact.js';
export { ManagedReadWriteLease, ManagedSemaphoreLease } from './shared-lease.js';
export {
  normalizeSemaphore,
  normalizeSemaphoreAcquire,
  normalizeSemaphoreTryAcquire,
} from './shared-validate.js';
export {
  assertCandidate,
  assertEncodableKey,
  assertNonNegativeMs,
  assertPermits,
  assertPositiveMs,
  assertResource,
  assertSignal,
  assertTtlMs,
  DEFAULT_WAIT_MS,
  MAX_PERMITS,
  MAX_TIMER_MS,
  normalizeAcquire,
  normalizeTryAcquire,
} from './validate.js';
export { type WithLockOptions, withLock } from './with-lock.js';
