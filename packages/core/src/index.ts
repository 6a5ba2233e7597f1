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
export { REDACTED, redactText, redactValue, safeCause } from './redact.js';
export {
  assertCandidate,
  assertEncodableKey,
  assertNonNegativeMs,
  assertPositiveMs,
  assertResource,
  assertSignal,
  assertTtlMs,
  DEFAULT_WAIT_MS,
  MAX_TIMER_MS,
  normalizeAcquire,
  normalizeTryAcquire,
} from './validate.js';
export { type WithLockOptions, withLock } from './with-lock.js';
