// #14 HIGH 1: a URL object, { url } or options naming no server were taken for ioredis options and
// silently became connections to localhost:6379 — a client configured for the same server as
// another then locked on a different server, and both held the lock. Now a URL object and { url }
// reach the server they name, and options that name no server are refused.
import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { RedisLockClient } from '@fencekit/redis';
import { afterEach, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';

const target = `redis://${redisEndpoint()}`;
const clients: RedisLockClient[] = [];
const client = (connection: unknown): RedisLockClient => {
  const c = new RedisLockClient({ connection: connection as never });
  clients.push(c);
  return c;
};
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('connections given as URL objects or { url }', () => {
  for (const [label, connection] of [
    ['new URL(X)', () => new URL(target)],
    ['{ url: X }', () => ({ url: target })],
    ['{ url: new URL(X) }', () => ({ url: new URL(target) })],
  ] as const) {
    it(`${label} locks on the server X names: a client given the string X is refused the lock`, async () => {
      const resource = `url-${randomUUID()}`;
      const a = client(connection());
      const b = client(target);
      const lease = await a.acquire(resource, { ttlMs: 10_000, waitMs: 2_000 });
      expect(await b.tryAcquire(resource, { ttlMs: 10_000 })).toBeNull();
      await lease.release();
      const after = await b.tryAcquire(resource, { ttlMs: 10_000 });
      expect(after).not.toBeNull();
      await after?.release();
    });
  }

  it('refuses options that name no server, a URL of another scheme and a bad url, without showing the password', () => {
    const secret = 'Sem;Colon,Pw(x)-secret';
    for (const connection of [
      {},
      { password: secret },
      new Map([['host', '127.0.0.1']]),
      new URL(`http://alice:${encodeURIComponent(secret)}@127.0.0.1:1`),
      { url: 42, password: secret },
    ]) {
      let error: unknown;
      try {
        client(connection);
      } catch (e) {
        error = e;
      }
      expect(error, String(connection)).toBeInstanceOf(InvalidArgumentError);
      assertNoSecret(error, [secret, encodeURIComponent(secret)], 'a refused connection');
    }
  });
});
