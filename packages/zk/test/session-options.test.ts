// A session timeout must leave a lease some validity once the ensemble's follower lag is taken off
// (see `vouchedMs` in src/session.ts): anything shorter is refused up front, with the figure needed.
import { InvalidArgumentError } from '@fencekit/core';
import {
  createSession,
  DEFAULT_FOLLOWER_LAG_MS,
  DEFAULT_SESSION_TIMEOUT_MS,
  ZkLockClient,
} from '@fencekit/zk';
import { expect, it } from 'vitest';

const servers = '127.0.0.1:1';

it('refuses a session timeout the follower lag leaves no validity', () => {
  // The old test and harness setting: 2 s sessions on ensembles whose followers lag up to 2 s.
  const refused = (() => {
    try {
      createSession({ servers, sessionTimeoutMs: 2_000, followerLagMs: 2_000 });
    } catch (error) {
      return error;
    }
  })();
  expect(refused).toBeInstanceOf(InvalidArgumentError);
  expect((refused as InvalidArgumentError).argument).toBe('sessionTimeoutMs');
  expect((refused as Error).message).toMatch(/at least \d+ ms with followerLagMs 2000/);
  // With the default lag (ZooKeeper's sample configuration), the old 10 s default is refused too.
  expect(() => new ZkLockClient({ servers, sessionTimeoutMs: 10_000 })).toThrow(InvalidArgumentError);
});

it('refuses a follower lag that is not a duration', () => {
  for (const followerLagMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, '2000' as unknown as number]) {
    expect(() => createSession({ servers, sessionTimeoutMs: 4_000, followerLagMs })).toThrow(
      InvalidArgumentError,
    );
  }
});

it('accepts the defaults, and what the tests and the harness use', async () => {
  expect(DEFAULT_SESSION_TIMEOUT_MS).toBeGreaterThan(DEFAULT_FOLLOWER_LAG_MS);
  const sessions = [
    createSession({ servers }),
    createSession({ servers, sessionTimeoutMs: 4_000, followerLagMs: 2_000 }),
  ];
  expect(sessions[1]!.followerLagMs).toBe(2_000);
  for (const session of sessions) await session.close();
});
