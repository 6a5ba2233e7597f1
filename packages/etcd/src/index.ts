/**
 * @fencekit/etcd: etcd locks, elections, semaphores and read-write locks (the Go client's `concurrency`
 * recipes). The errors its methods throw are `@fencekit/core`'s classes, re-exported so a user needs only
 * this package.
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
export { EtcdClient, type EtcdClientOptions } from './client.js';
export type { EtcdConnectionOptions } from './connection.js';
export { EtcdElection, type EtcdLeaderInfo, EtcdLeadership } from './election.js';
export { guardedPut, ownershipCompare } from './guard.js';
export { EtcdLease } from './lease.js';
export { Session, type SessionOptions } from './session.js';
export { EtcdSharedLockClient } from './shared-client.js';
export { EtcdReadWriteLease, EtcdSemaphoreLease } from './shared-lease.js';
