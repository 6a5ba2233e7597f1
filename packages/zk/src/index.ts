/**
 * @fencekit/zk: ZooKeeper locks, elections, semaphores and read-write locks (Curator's recipes). The
 * errors its methods throw are `@fencekit/core`'s classes, re-exported so a user needs only this package.
 */
export {
  BackendUnavailableError,
  ClientClosedError,
  FencekitError,
  type FencekitErrorCode,
  IndeterminateError,
  InvalidArgumentError,
  isFencekitError,
  type Lease,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  NotLockHolderError,
  type ReadWriteLease,
  type ReadWriteLock,
  type Semaphore,
  type SemaphoreLease,
  StaleFenceError,
  UnsupportedOperationError,
} from '@fencekit/core';
export { ZkSession } from './checked-session.js';
export {
  type ConnectOptions,
  createSession,
  DEFAULT_SESSION_TIMEOUT_MS,
  type ZkServerOptions,
  type ZkSharedSessionOptions,
} from './connect.js';
export { ZkElection, ZkElectionClient } from './election.js';
export {
  GuardedWriteIndeterminateError,
  type GuardedWriteOptions,
  GuardedWriteRefusedError,
} from './guarded-write.js';
export { ZkLeadership } from './leadership.js';
export { UNSURE, ZkLease, ZkLockClient } from './lock.js';
export { DEFAULT_FOLLOWER_LAG_MS, type SessionEvent } from './session.js';
export { ZkSharedLockClient } from './shared-client.js';
