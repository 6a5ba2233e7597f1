import { randomBytes, randomUUID } from 'node:crypto';
import { isFencekitError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';
import { type LocalRedis, startRedis } from './support/redis-server.js';

// ioredis keeps the failed command on a ReplyError (`command.args` = [user, password] for AUTH); an
// error kept as `cause` carried the password into every log that printed the error in full.

const endpoint = redisEndpoint();
const [host, port] = endpoint.split(':') as [string, string];

/** What a wrong password gives: the failures of a tryAcquire and an acquire (typed, never a hang). */
async function failureOf(client: RedisLockClient): Promise<unknown[]> {
  try {
    const errors: unknown[] = [];
    for (const attempt of [
      () => client.tryAcquire(`secret-${randomUUID()}`, { ttlMs: 1_000 }),
      () => client.acquire(`secret-${randomUUID()}`, { ttlMs: 1_000, waitMs: 1_000 }),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFencekitError(error), String(error)).toBe(true);
      errors.push(error);
    }
    return errors;
  } finally {
    await client.close();
  }
}

describe('an ACL user with a wrong password', () => {
  const user = `fencekit-secret-${randomBytes(4).toString('hex')}`;
  const password = `right-${randomBytes(12).toString('hex')}`;
  const wrong = `wrong-${randomBytes(12).toString('hex')}`;
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(`redis://${endpoint}`);
    await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~fencekit:*', '&fencekit:*', '+@all');
  });
  afterAll(async () => {
    await admin.call('ACL', 'DELUSER', user);
    await admin.quit();
  });

  it('never shows the password in the error, its message or its cause chain (options)', async () => {
    const error = await failureOf(
      new RedisLockClient({
        connection: { host, port: Number(port), username: user, password: wrong, maxRetriesPerRequest: 0 },
      }),
    );
    assertNoSecret(error, [wrong, password], 'wrong ACL password given as options');
  });

  it('never shows the password in the error, its message or its cause chain (redis:// URL)', async () => {
    const error = await failureOf(
      new RedisLockClient({ connection: `redis://${user}:${wrong}@${endpoint}?maxRetriesPerRequest=0` }),
    );
    assertNoSecret(error, [wrong, password], 'wrong ACL password in a redis:// URL');
  });
});

describe('requirepass with a wrong password', () => {
  const password = `right-${randomBytes(12).toString('hex')}`;
  const wrong = `wrong-${randomBytes(12).toString('hex')}`;
  let server: LocalRedis;

  beforeAll(async () => {
    server = await startRedis(['--requirepass', password]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('never shows the password in the error, its message or its cause chain', async () => {
    const error = await failureOf(
      new RedisLockClient({
        connection: { host: '127.0.0.1', port: server.port, password: wrong, maxRetriesPerRequest: 0 },
      }),
    );
    assertNoSecret(error, [wrong, password], 'wrong requirepass password');
    const url = await failureOf(
      new RedisLockClient({ connection: `redis://:${wrong}@${server.endpoint}?maxRetriesPerRequest=0` }),
    );
    assertNoSecret(url, [wrong, password], 'wrong requirepass password in a redis:// URL');
  });
});
