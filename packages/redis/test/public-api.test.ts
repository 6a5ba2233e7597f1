import * as core from '@fencekit/core';
import * as api from '@fencekit/redis';
import { describe, expect, it } from 'vitest';

/** Issue #16: what a user of @fencekit/redis gets from its index, and nothing internal. */
const PUBLIC = [
  'BackendUnavailableError',
  'CANCEL_TIMEOUT_MS',
  'CLOSE_BOUND_MS',
  'ClientClosedError',
  'DEFAULT_COMMAND_TIMEOUT_MS',
  'DEFAULT_KEY_PREFIX',
  'FencekitError',
  'IndeterminateError',
  'InvalidArgumentError',
  'LockAbortedError',
  'LockLostError',
  'LockTimeoutError',
  'NotLockHolderError',
  'RedisLockClient',
  'RedisSharedLockClient',
  'StaleFenceError',
  'UnsupportedOperationError',
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
  'UnsupportedOperationError',
  'isFencekitError',
];

describe('@fencekit/redis public API', () => {
  it('exports exactly its documented names', () => {
    expect(Object.keys(api).sort()).toEqual(PUBLIC);
  });

  it('re-exports the error classes its methods throw, the very classes of @fencekit/core', () => {
    for (const name of ERRORS) {
      expect((api as Record<string, unknown>)[name], name).toBe((core as Record<string, unknown>)[name]);
    }
  });
});
