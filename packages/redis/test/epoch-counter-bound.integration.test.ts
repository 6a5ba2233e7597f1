import { randomUUID } from 'node:crypto';
import { BackendUnavailableError } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { type AttemptRequest, LockNode, resourceKeys } from '@fencekit/redis/internal';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';

/**
 * Epoch fences keep the counter below 10^12. A grant that would pass it fails with
 * `BackendUnavailableError`, which the README says means nothing happened: Redis does not roll back a
 * script's writes, so the bound must be checked before the script writes anything (it was checked after the
 * SET that grants, leaving a lock nobody had, or a hand-off without a fence).
 */
const LAST = '999999999999';
let raw: Redis;
const clients: RedisLockClient[] = [];

beforeAll(() => {
  raw = new Redis(`redis://${redisEndpoint()}`);
});
afterAll(() => {
  raw.disconnect();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function epochClient(): RedisLockClient {
  const client = new RedisLockClient({ connection: `redis://${redisEndpoint()}`, fence: 'epoch' });
  clients.push(client);
  return client;
}

describe('epoch fences at the counter bound', () => {
  it('a release with a waiter queued stays a plain release: no fenceless hand-off, the waiter fails cleanly', async () => {
    const resource = `bound-${randomUUID()}`;
    const keys = resourceKeys('fencekit:', resource);
    await raw.set(keys.fence, '999999999998');
    const client = epochClient();
    const holder = await client.acquire(resource, { ttlMs: 20_000 });
    expect(holder.fence % 10n ** 12n).toBe(BigInt(LAST));
    const waiting = client
      .acquire(resource, { ttlMs: 20_000, waitMs: 3_000 })
      .catch((error: unknown) => error);
    // Queued behind the holder (its entry is what the release would hand the lock to).
    for (let i = 0; i < 100 && (await raw.zcard(keys.queue)) === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await raw.zcard(keys.queue)).toBe(1);

    await expect(holder.release()).resolves.toBeUndefined();
    const refused = await waiting;
    expect(refused).toBeInstanceOf(BackendUnavailableError);
    expect(String((refused as Error).message)).toContain('10^12');
    // Nothing granted on the way: no lock key, the counter untouched.
    expect(await raw.get(keys.lock)).toBeNull();
    expect(await raw.get(keys.fence)).toBe(LAST);
  });

  it('a refused grant writes nothing: tryAcquire, acquire and the full script leave no lock behind', async () => {
    const resource = `bound-${randomUUID()}`;
    const keys = resourceKeys('fencekit:', resource);
    await raw.set(keys.fence, LAST);
    const client = epochClient();
    await expect(client.tryAcquire(resource, { ttlMs: 20_000 })).rejects.toBeInstanceOf(
      BackendUnavailableError,
    );
    expect(await raw.get(keys.lock)).toBeNull();
    await expect(client.acquire(resource, { ttlMs: 20_000, waitMs: 500 })).rejects.toBeInstanceOf(
      BackendUnavailableError,
    );
    expect(await raw.get(keys.lock)).toBeNull();

    // The full acquire script, with a queue in place (the fast path does not decide then).
    const node = new LockNode('bound', raw, undefined, true);
    const request: AttemptRequest = {
      owner: `o-${randomUUID()}`,
      ttlMs: 20_000,
      mode: 'try',
      ticket: '',
      waiterTtlMs: 3_000,
      channel: '',
      fenced: true,
      handoff: false,
    };
    await raw.zadd(keys.queue, 1, request.owner);
    await raw.hset(keys.waiters, request.owner, `${Date.now() + 60_000}|0|fencekit:wake:x`);
    await expect(node.attempt(keys, request)).rejects.toThrow(/10\^12/);
    expect(await raw.get(keys.lock)).toBeNull();
    expect(await raw.zscore(keys.queue, request.owner)).not.toBeNull();
    expect(await raw.get(keys.fence)).toBe(LAST);
  });
});
