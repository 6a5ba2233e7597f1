// #14 LOW 18: the password changes while a client is connected; its connection is killed and every
// reconnection is refused with WRONGPASS. An acquire begun then is never written (ioredis sends
// commands only on a ready connection), so nothing can have been granted: it is
// BackendUnavailableError saying authentication failed, not IndeterminateError ("may have taken effect").
import { randomBytes, randomUUID } from 'node:crypto';
import { BackendUnavailableError, IndeterminateError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalRedis, startRedis } from './support/redis-server.js';

const password = `old-${randomBytes(8).toString('hex')}`;
const changed = `new-${randomBytes(8).toString('hex')}`;
let server: LocalRedis;

beforeAll(async () => {
  server = await startRedis(['--requirepass', password]);
});
afterAll(async () => {
  await server?.stop();
});

it('an acquire while every reconnection is refused with WRONGPASS is BackendUnavailableError (authentication failed)', async () => {
  const client = new RedisLockClient({
    connection: { host: '127.0.0.1', port: server.port, password },
  });
  const admin = new Redis({ host: '127.0.0.1', port: server.port, password });
  try {
    const lease = await client.acquire(`before-${randomUUID()}`, { ttlMs: 5_000 });
    await admin.config('SET', 'requirepass', changed);
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    // A command written before the client saw the kill may have been in flight: not this test's case.
    for (let i = 0; i < 250 && client.redis.status === 'ready'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(client.redis.status).not.toBe('ready');
    // Acquires begun while the connection is down (reconnecting or refused): each fails at once
    // or within its wait; none may be reported as possibly granted.
    for (let i = 0; i < 4; i++) {
      const error = await client
        .acquire(`after-${randomUUID()}`, { ttlMs: 5_000, waitMs: 1_000 })
        .catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(IndeterminateError);
      expect(error, String(error)).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toMatch(/authentication/i);
      assertNoSecret(error, [password, changed], 'an acquire after WRONGPASS');
    }
    await lease.release().catch(() => undefined);
  } finally {
    await admin.config('SET', 'requirepass', password).catch(() => undefined);
    await client.close();
    await admin.quit();
  }
});
