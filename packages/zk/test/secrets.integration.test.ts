import { randomBytes } from 'node:crypto';
import { injectCluster } from '@fencekit/cluster/vitest';
import { InvalidArgumentError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { createSession, ZkElectionClient, ZkLockClient } from '@fencekit/zk';
import { describe, expect, it } from 'vitest';

// The adapter has no ZooKeeper authentication (digest auth is not supported), so the only place a
// password can enter is the connection string: it must be refused, and the refusal must not show it.

const { endpoints } = injectCluster('zookeeper');
const secret = `secret-${randomBytes(12).toString('hex')}`;

function refusal(open: () => unknown): InvalidArgumentError {
  let opened: unknown;
  try {
    opened = open();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  void (opened as { close(): Promise<void> }).close();
  return expect.fail('the connection string was accepted');
}

describe('connection strings that carry a password', () => {
  it('are refused, and the error does not show the password', () => {
    const [first, ...rest] = endpoints;
    for (const servers of [
      `digest:${secret}@${first}`,
      [`digest:${secret}@${first}`, ...rest],
      `${endpoints.join(',')},zk:${secret}@${first}/chroot`,
    ]) {
      for (const open of [
        () => createSession({ servers }),
        () => new ZkLockClient({ servers }),
        () => new ZkElectionClient({ servers }),
      ]) {
        const error = refusal(open);
        expect(error.argument).toBe('servers');
        assertNoSecret(error, [secret], 'a password in the connection string');
      }
    }
  });

  it('a malformed string with a password is refused without showing it', () => {
    const error = refusal(() => createSession({ servers: `digest:${secret}@no-port` }));
    assertNoSecret(error, [secret], 'a malformed connection string');
  });

  it('an @ in the chroot path is no credential and stays allowed', async () => {
    const session = createSession({ servers: `${endpoints.join(',')}/fencekit-at@chroot` });
    await session.close();
  });
});
