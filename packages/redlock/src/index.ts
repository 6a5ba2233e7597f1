/**
 * @fencekit/redlock: Redlock over N independent Redis masters. The public API: the client, its options,
 * the bounds it keeps, and the errors its methods throw (`@fencekit/core`'s classes, re-exported so a
 * user needs only this package).
 */
export {
  ClientClosedError,
  FencekitError,
  type FencekitErrorCode,
  InvalidArgumentError,
  isFencekitError,
  type Lease,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  type NodeOutcome,
  NotLockHolderError,
  QuorumError,
} from '@fencekit/core';
export { CANCEL_TIMEOUT_MS, closeBoundMs, RELEASE_TIMEOUT_MS, WAIT_OVERRUN_MS } from './bounds.js';
export { RedlockClient, type RedlockClientOptions } from './client.js';
