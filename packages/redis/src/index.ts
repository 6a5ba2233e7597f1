/**
 * @fencekit/redis: fenced, fair locks on one Redis. The public API: the client, its options, the bounds
 * it keeps, and the errors its methods throw (the same classes as `@fencekit/core`'s, re-exported so a
 * user needs only this package). `@fencekit/redis/internal` holds the building blocks @fencekit/redlock
 * and the test tooling share; it is not public API and may change in any release.
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
export { CANCEL_TIMEOUT_MS, CLOSE_BOUND_MS } from './bounds.js';
export { RedisLockClient, type RedisLockClientOptions } from './client.js';
export { DEFAULT_COMMAND_TIMEOUT_MS, type RedisConnection } from './connection.js';
export type { RedisClient, RedisClusterConnection, RedisDeployment } from './deployment.js';
export { DEFAULT_KEY_PREFIX } from './keys.js';
export { RedisSharedLockClient, type RedisSharedLockClientOptions } from './shared-client.js';
