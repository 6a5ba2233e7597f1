import * as core from '@fencekit/core';
import * as api from '@fencekit/etcd';
import { describe, expect, it } from 'vitest';

/** Issue #16: what a user of @fencekit/etcd gets from its index, and nothing internal. */
const PUBLIC = [
  'BackendUnavailableError',
  'ClientClosedError',
  'EtcdClient',
  'EtcdElection',
  'EtcdLeadership',
  'EtcdLease',
  'EtcdReadWriteLease',
  'EtcdSemaphoreLease',
  'EtcdSharedLockClient',
  'FencekitError',
  'IndeterminateError',
  'InvalidArgumentError',
  'LockAbortedError',
  'LockLostError',
  'LockTimeoutError',
  'NotLockHolderError',
  'Session',
  'StaleFenceError',
  'UnsupportedOperationError',
  'guardedPut',
  'isFencekitError',
  'ownershipCompare',
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

describe('@fencekit/etcd public API', () => {
  it('exports exactly its documented names', () => {
    expect(Object.keys(api).sort()).toEqual(PUBLIC);
  });

  it('re-exports the error classes its methods throw, the very classes of @fencekit/core', () => {
    for (const name of ERRORS) {
      expect((api as Record<string, unknown>)[name], name).toBe((core as Record<string, unknown>)[name]);
    }
  });
});
