import * as core from '@fencekit/core';
import * as api from '@fencekit/redlock';
import { describe, expect, it } from 'vitest';

/** Issue #16: what a user of @fencekit/redlock gets from its index, and nothing internal. */
const PUBLIC = [
  'CANCEL_TIMEOUT_MS',
  'ClientClosedError',
  'FencekitError',
  'InvalidArgumentError',
  'LockAbortedError',
  'LockLostError',
  'LockTimeoutError',
  'NotLockHolderError',
  'QuorumError',
  'RELEASE_TIMEOUT_MS',
  'RedlockClient',
  'WAIT_OVERRUN_MS',
  'closeBoundMs',
  'isFencekitError',
];

/** The errors its methods throw: a user needs no import of @fencekit/core to catch them. */
const ERRORS = [
  'ClientClosedError',
  'FencekitError',
  'InvalidArgumentError',
  'LockAbortedError',
  'LockLostError',
  'LockTimeoutError',
  'NotLockHolderError',
  'QuorumError',
  'isFencekitError',
];

describe('@fencekit/redlock public API', () => {
  it('exports exactly its documented names', () => {
    expect(Object.keys(api).sort()).toEqual(PUBLIC);
  });

  it('re-exports the error classes its methods throw, the very classes of @fencekit/core', () => {
    for (const name of ERRORS) {
      expect((api as Record<string, unknown>)[name], name).toBe((core as Record<string, unknown>)[name]);
    }
  });
});
