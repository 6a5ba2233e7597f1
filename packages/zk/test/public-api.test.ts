import * as core from '@fencekit/core';
import * as api from '@fencekit/zk';
import { describe, expect, it } from 'vitest';

/** Issue #16: what a user of @fencekit/zk gets from its index, and nothing internal. */
const PUBLIC = [
  'BackendUnavailableError',
  'ClientClosedError',
  'DEFAULT_FOLLOWER_LAG_MS',
  'DEFAULT_SESSION_TIMEOUT_MS',
  'FencekitError',
  'GuardedWriteIndeterminateError',
  'GuardedWriteRefusedError',
  'IndeterminateError',
  'InvalidArgumentError',
  'LockAbortedError',
  'LockLostError',
  'LockTimeoutError',
  'NotLockHolderError',
  'StaleFenceError',
  'UNSURE',
  'UnsupportedOperationError',
  'ZkElection',
  'ZkElectionClient',
  'ZkLeadership',
  'ZkLease',
  'ZkLockClient',
  'ZkSession',
  'ZkSharedLockClient',
  'createSession',
  'isFencekitError',
];

/** The errors its methods throw: a user needs no import of @fencekit/core to catch them. */
const ERRORS = [
  'BackendUnavailableError',
  'ClientClosedError',
  'FencekitError',
  'IndeterminateError',
  'InvalidArgumentError',
  'LockAbortedError',
  'LockLostError',
  'LockTimeoutError',
  'NotLockHolderError',
  'StaleFenceError',
  'isFencekitError',
];

describe('@fencekit/zk public API', () => {
  it('exports exactly its documented names', () => {
    expect(Object.keys(api).sort()).toEqual(PUBLIC);
  });

  it('re-exports the error classes its methods throw, the very classes of @fencekit/core', () => {
    for (const name of ERRORS) {
      expect((api as Record<string, unknown>)[name], name).toBe((core as Record<string, unknown>)[name]);
    }
  });
});
