// #14 HIGH 6 and MEDIUM 9: every exported entry point (ZkSession, createSession, ZkLockClient,
// ZkElectionClient) checks the connection string before node-zookeeper-client sees it. Unchecked, a
// port out of range or a `user:password@` entry made its timer throw where nothing could catch it
// (the process died, printing the password), and `zk://…` failed with a raw AssertionError.
import { InvalidArgumentError } from '@fencekit/core';
import { renderEverywhere } from '@fencekit/core/testing';
import { createSession, ZkElectionClient, ZkLockClient, ZkSession } from '@fencekit/zk';
import { describe, expect, it } from 'vitest';

const timing = { sessionTimeoutMs: 4_000, followerLagMs: 1_000 };

const entryPoints: [string, (servers: string | string[]) => { close(): Promise<void> }][] = [
  ['ZkSession', (servers) => new ZkSession({ servers: servers as string, ...timing })],
  ['createSession', (servers) => createSession({ servers, ...timing })],
  ['ZkLockClient', (servers) => new ZkLockClient({ servers, ...timing })],
  ['ZkElectionClient', (servers) => new ZkElectionClient({ servers, ...timing })],
];

function refusal(make: () => unknown): unknown {
  try {
    const made = make() as { close?: () => Promise<void> };
    void made.close?.();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('ZooKeeper connection strings', () => {
  const bad: (string | string[])[] = [
    'bob:ZkPw-1@127.0.0.1:1',
    '127.0.0.1:1,bob:Pw,comma-ZkPw-2@127.0.0.1:1',
    ['digest:bob:ZkPw-3@127.0.0.1:2181'],
    'zk://bob:ZkPw-4@127.0.0.1:2181',
    'zk://127.0.0.1:2181',
    '127.0.0.1:99999',
    '127.0.0.1:65536',
    '127.0.0.1:0',
    '127.0.0.1:2181/chroot/',
    '127.0.0.1:2181/a/../b',
    '127.0.0.1:2181//a',
    '',
    [],
  ];

  for (const [name, make] of entryPoints) {
    it(`${name} refuses user info, schemes, bad ports and bad chroots with a redacted InvalidArgumentError`, () => {
      for (const servers of bad) {
        if (name === 'ZkSession' && Array.isArray(servers)) continue;
        const error = refusal(() => make(servers));
        expect(error, JSON.stringify(servers)).toBeInstanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).argument).toBe('servers');
        expect(renderEverywhere(error)).not.toContain('ZkPw');
        // The refusal reads as written: its wording has nothing the redactor takes for user info.
        expect((error as InvalidArgumentError).message).toContain(
          `expected ${(error as InvalidArgumentError).expected}`,
        );
      }
    });
  }

  it('accepts host:port lists, ports 1 and 65535, and a chroot', async () => {
    for (const servers of [
      '127.0.0.1:1',
      'zk-1.example.test:65535,127.0.0.1:2181/fencekit/app',
      ['a:1', 'b:2'],
    ]) {
      const session = createSession({ servers, ...timing });
      await session.close();
    }
  });
});
