import { randomUUID } from 'node:crypto';
import { RedisSharedLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';

const endpoint = redisEndpoint();
const clients: RedisSharedLockClient[] = [];
const connections: Redis[] = [];

function connection(): Redis {
  const [host, port] = endpoint.split(':');
  const redis = new Redis({ host, port: Number(port), lazyConnect: false });
  connections.push(redis);
  return redis;
}

/** A client on a connection of ours whose script calls (EVALSHA / EVAL) we count. */
function countedClient(options: { waiterTtlMs?: number } = {}): {
  client: RedisSharedLockClient;
  scripts: () => number;
} {
  const redis = connection();
  let scripts = 0;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    if (command.name === 'evalsha' || command.name === 'eval') scripts++;
    return (send as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
  const client = new RedisSharedLockClient({ connection: redis, ...options });
  clients.push(client);
  return { client, scripts: () => scripts };
}

function client(options: { waiterTtlMs?: number } = {}): RedisSharedLockClient {
  const c = new RedisSharedLockClient({ connection: `redis://${endpoint}`, ...options });
  clients.push(c);
  return c;
}

function name(): string {
  return `shared-${randomUUID()}`;
}

/** Waits (bounded) until `count` waiters are queued on `name`'s `kind`. */
async function untilQueued(kind: 'semaphore' | 'rwlock', key: string, count: number): Promise<void> {
  const redis = connection();
  for (let i = 0; i < 500; i++) {
    if ((await redis.zcard(`fencekit:{${key}}:${kind}:queue`)) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`fewer than ${count} waiters queued on ${key}`);
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(connections.splice(0).map((c) => c.quit()));
});

describe('RedisSharedLockClient', () => {
  it('grants an uncontended permit in one script call and releases it in one', async () => {
    const { client: c, scripts } = countedClient();
    // Once first, so the server has the scripts cached (a first EVALSHA answers NOSCRIPT, then EVAL).
    await (await c.semaphore(name(), { permits: 2 }).acquire({ ttlMs: 5_000 })).release();
    const before = scripts();
    const semaphore = c.semaphore(name(), { permits: 2 });
    const lease = await semaphore.acquire({ ttlMs: 5_000 });
    expect(scripts() - before).toBe(1);
    await lease.release();
    expect(scripts() - before).toBe(2);
    const reader = await c.readWriteLock(name()).read({ ttlMs: 5_000 });
    expect(scripts() - before).toBe(3);
    await reader.release();
  });

  it('declares three keys for the uncontended grant and for a release nobody waits on, and keeps the books', async () => {
    const redis = connection();
    const declared: number[] = [];
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: { name: string; args: unknown[] }, ...rest: unknown[]) => {
      if (command.name === 'evalsha' || command.name === 'eval') declared.push(Number(command.args[1]));
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof redis.sendCommand;
    const c = new RedisSharedLockClient({ connection: redis });
    clients.push(c);
    const other = client();
    const key = name();
    const holders = `fencekit:{${key}}:semaphore:holders`;
    await (await c.semaphore(name(), { permits: 2 }).acquire({ ttlMs: 5_000 })).release();
    declared.length = 0;
    // Nobody holds: the fast grant. Then another client's grant, so this release is not the sole
    // holder's: the three-key release still does the whole job (nobody waits), in one call.
    const first = await c.semaphore(key, { permits: 2 }).acquire({ ttlMs: 5_000 });
    const second = await other.semaphore(key, { permits: 2 }).acquire({ ttlMs: 5_000 });
    await first.release();
    expect(declared).toEqual([3, 3]);
    expect(await redis.hget(holders, ':used')).toBe('1');
    expect(await redis.hexists(holders, first.owner)).toBe(0);
    expect(await redis.hexists(holders, second.owner)).toBe(1);
    // Held by the other client now: this client's grant goes through the full script, whose
    // answer it counts from the request that got it.
    const third = await c.semaphore(key, { permits: 2 }).acquire({ ttlMs: 5_000 });
    expect(third.fence).toBeGreaterThan(second.fence);
    expect(await redis.hget(holders, ':used')).toBe('2');
    await second.release();
    await third.release();
    expect(await redis.exists(holders, `fencekit:{${key}}:semaphore:expiry`)).toBe(0);
  });

  it('hands a released permit to the parked waiter, which asks nothing more (no polling)', async () => {
    const key = name();
    const holder = client();
    // A 60 s entry: the waiter's heartbeat is 20 s, far beyond this test's wait for the grant.
    const { client: waiterClient, scripts } = countedClient({ waiterTtlMs: 60_000 });
    const held = await holder.semaphore(key, { permits: 1 }).acquire({ ttlMs: 30_000 });
    const waiting = waiterClient.semaphore(key, { permits: 1 }).acquire({ ttlMs: 10_000, waitMs: 15_000 });
    await untilQueued('semaphore', key, 1);
    const asked = scripts();
    await held.release();
    const lease = await waiting;
    // The release granted it (with a higher fence) and PUBLISHed it: the waiter sent no attempt.
    expect(scripts()).toBe(asked);
    expect(lease.fence).toBeGreaterThan(held.fence);
    expect(lease.held).toBe(true);
    await lease.release();
  });

  it('a client that has waited before queues with its first script call when the permits are taken', async () => {
    const key = name();
    const holder = client();
    const { client: waiterClient, scripts } = countedClient({ waiterTtlMs: 60_000 });
    const semaphore = waiterClient.semaphore(key, { permits: 1 });
    // A first wait subscribes the client for wake-ups.
    const first = await holder.semaphore(key, { permits: 1 }).acquire({ ttlMs: 30_000 });
    const firstWait = semaphore.acquire({ ttlMs: 10_000, waitMs: 15_000 });
    await untilQueued('semaphore', key, 1);
    await first.release();
    await (await firstWait).release();
    // Now: one script call queues it (not a refused try, then a second call to queue).
    const held = await holder.semaphore(key, { permits: 1 }).acquire({ ttlMs: 30_000 });
    const before = scripts();
    const waiting = semaphore.acquire({ ttlMs: 10_000, waitMs: 15_000 });
    await untilQueued('semaphore', key, 1);
    expect(scripts() - before).toBe(1);
    await held.release();
    const lease = await waiting;
    expect(scripts() - before).toBe(1);
    expect(lease.fence).toBeGreaterThan(held.fence);
    // And with the permits free, that one call is the grant.
    await lease.release();
    const again = await semaphore.acquire({ ttlMs: 10_000, waitMs: 15_000 });
    expect(scripts() - before).toBe(3);
    await again.release();
  });

  it('a client that has waited before, queued by its first call, leaves the queue at waitMs and on close', async () => {
    const key = name();
    const redis = connection();
    const holder = client();
    const waiterClient = client({ waiterTtlMs: 60_000 });
    const semaphore = waiterClient.semaphore(key, { permits: 1 });
    const first = await holder.semaphore(key, { permits: 1 }).acquire({ ttlMs: 30_000 });
    const firstWait = semaphore.acquire({ ttlMs: 10_000, waitMs: 15_000 });
    await untilQueued('semaphore', key, 1);
    await first.release();
    const held = await firstWait;
    await expect(semaphore.acquire({ ttlMs: 10_000, waitMs: 200 })).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(await redis.zcard(`fencekit:{${key}}:semaphore:queue`)).toBe(0);
    const waiting = semaphore.acquire({ ttlMs: 10_000, waitMs: 15_000 });
    const settled = waiting.catch((error: unknown) => error);
    await untilQueued('semaphore', key, 1);
    await waiterClient.close();
    expect(await settled).toMatchObject({ name: 'ClientClosedError' });
    expect(await redis.zcard(`fencekit:{${key}}:semaphore:queue`)).toBe(0);
    expect(held.held).toBe(false);
  });

  it('keeps every digit of a fence past 2^53, on the fast path and when a release hands the permit over', async () => {
    const key = name();
    await connection().set(`fencekit:{${key}}:semaphore:fence`, '9007199254740993');
    const semaphore = client().semaphore(key, { permits: 1 });
    const held = await semaphore.acquire({ ttlMs: 30_000 });
    expect(held.fence).toBe(9007199254740994n);
    const waiting = client({ waiterTtlMs: 60_000 })
      .semaphore(key, { permits: 1 })
      .acquire({ ttlMs: 10_000, waitMs: 15_000 });
    await untilQueued('semaphore', key, 1);
    await held.release();
    const handed = await waiting;
    expect(handed.fence).toBe(9007199254740995n);
    await handed.release();
  });

  it("one writer's release hands the lock to every reader queued behind it at once", async () => {
    const key = name();
    const writer = await client().readWriteLock(key).write({ ttlMs: 30_000 });
    const readers = [client({ waiterTtlMs: 60_000 }), client({ waiterTtlMs: 60_000 })];
    const waiting = readers.map((r) => r.readWriteLock(key).read({ ttlMs: 10_000, waitMs: 15_000 }));
    await untilQueued('rwlock', key, 2);
    await writer.release();
    const leases = await Promise.all(waiting);
    expect(leases.every((l) => l.held && l.fence > writer.fence)).toBe(true);
    for (const lease of leases) await lease.release();
  });

  it('leaves only the fence counter behind once every holder and waiter is gone', async () => {
    const key = name();
    const semaphore = client().semaphore(key, { permits: 1 });
    const held = await semaphore.acquire({ ttlMs: 10_000 });
    await expect(
      client().semaphore(key, { permits: 1 }).acquire({ ttlMs: 1_000, waitMs: 100 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    await held.release();
    const keys = await connection().keys(`fencekit:{${key}}:*`);
    expect(keys).toEqual([`fencekit:{${key}}:semaphore:fence`]);
  });

  it('keeps a semaphore, a read-write lock and a mutex of one name apart', async () => {
    const key = name();
    const c = client();
    const permit = await c.semaphore(key, { permits: 1 }).acquire({ ttlMs: 5_000 });
    const writer = await c.readWriteLock(key).tryWrite({ ttlMs: 5_000 });
    expect(writer).not.toBeNull();
    await writer?.release();
    await permit.release();
  });
});

describe('RedisSharedLockClient queue clean-up', () => {
  it('a waiter that died at the head of the queue (its entry no longer refreshed) stops blocking those behind it', async () => {
    const key = name();
    const redis = connection();
    const base = `fencekit:{${key}}:semaphore:`;
    const semaphore = client().semaphore(key, { permits: 2 });
    const held = await semaphore.acquire({ ttlMs: 30_000 });
    // A dead waiter at the head, for both permits (so it cannot be granted while one is held), on a
    // channel nobody listens to, its entry deadline 300 ms ahead (server time) and never refreshed.
    const [seconds = 0, micros = 0] = (await redis.time()).map(Number);
    const deadline = seconds * 1000 + Math.floor(micros / 1000) + 300;
    await redis.zadd(`${base}queue`, 0, 'dead-waiter');
    await redis.hset(`${base}waiters`, 'dead-waiter', `${deadline}|2|10000|p|nobody`, ':limit', '2');
    // The free permit is behind the head: refused while the entry lives, FIFO.
    expect(await semaphore.tryAcquire({ ttlMs: 5_000 })).toBeNull();
    // Granted once the entry's deadline passes (the refusal's retry time), long before the holder's TTL.
    const lease = await semaphore.acquire({ ttlMs: 5_000, waitMs: 10_000 });
    expect(await redis.hexists(`${base}holders`, 'dead-waiter')).toBe(0);
    expect(await redis.exists(`${base}queue`)).toBe(0);
    await lease.release();
    await held.release();
    expect(await redis.exists(`${base}queue`, `${base}waiters`, `${base}holders`)).toBe(0);
  });
});

describe('RedisSharedLockClient permit counts', () => {
  it('refuses another count while the semaphore is in use, and accepts it once the holders lapsed', async () => {
    const key = name();
    const mine = client().semaphore(key, { permits: 2 });
    const held = await mine.acquire({ ttlMs: 300 });
    // A longer grant, released: the holders' record (and its key TTL) outlives the short one.
    await (await mine.acquire({ ttlMs: 10_000 })).release();
    const other = client().semaphore(key, { permits: 5 });
    await expect(other.tryAcquire({ ttlMs: 1_000 })).rejects.toMatchObject({ code: 'invalid-argument' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(held.held).toBe(false);
    // The lapsed holder's record is purged before the count is compared: the name is idle now.
    const lease = await other.tryAcquire({ ttlMs: 1_000 });
    expect(lease?.permits).toBe(1);
    await lease?.release();
  });
});
