import { randomUUID } from 'node:crypto';
import {
  InvalidArgumentError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  NotLockHolderError,
} from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';
import { queuedWaiters, untilQueued } from './support/queue.js';

const endpoint = redisEndpoint();
const clients: RedisLockClient[] = [];

function client(options: Partial<ConstructorParameters<typeof RedisLockClient>[0]> = {}): RedisLockClient {
  const c = new RedisLockClient({ connection: `redis://${endpoint}`, ...options });
  clients.push(c);
  return c;
}

function resource(): string {
  return `test-${randomUUID()}`;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('RedisLockClient', () => {
  it('grants with strictly increasing fences across clients', async () => {
    const [a, b] = [client(), client()];
    const r = resource();
    const first = await a.acquire(r, { ttlMs: 5_000 });
    expect(await b.tryAcquire(r, { ttlMs: 5_000 })).toBeNull();
    await first.release();
    const second = await b.acquire(r, { ttlMs: 5_000 });
    expect(second.fence).toBeGreaterThan(first.fence);
    await second.release();
  });

  it('hands the lock to waiters in arrival order across clients', async () => {
    const holder = client();
    const r = resource();
    const lease = await holder.acquire(r, { ttlMs: 10_000 });
    const order: number[] = [];
    const waiters = [client(), client(), client()];
    const pending: Promise<void>[] = [];
    for (const [i, w] of waiters.entries()) {
      pending.push(
        w.acquire(r, { ttlMs: 10_000, waitMs: 10_000 }).then(async (l) => {
          order.push(i);
          await l.release();
        }),
      );
      // The next waiter arrives only once this one is in line.
      await untilQueued(endpoint, r, i + 1);
    }
    await lease.release();
    await Promise.all(pending);
    expect(order).toEqual([0, 1, 2]);
  });

  it("grants to a waiter once a dead holder's lease expires", async () => {
    const r = resource();
    const raw = new Redis(`redis://${endpoint}`);
    try {
      // A holder that died: its key is there with a TTL, and nobody will release it.
      await raw.set(`fencekit:{${r}}:lock`, 'dead-holder', 'PX', 300);
    } finally {
      raw.disconnect();
    }
    const lease = await client().acquire(r, { ttlMs: 5_000, waitMs: 5_000 });
    expect(lease.held).toBe(true);
    await lease.release();
  });

  it('times out, and an aborted waiter leaves no grant or queue entry behind', async () => {
    const [a, b, c] = [client(), client(), client()];
    const r = resource();
    const lease = await a.acquire(r, { ttlMs: 10_000 });
    await expect(b.acquire(r, { ttlMs: 1_000, waitMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    const controller = new AbortController();
    const aborted = c.acquire(r, { ttlMs: 1_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    await lease.release();
    // Nobody is queued any more, so a plain try succeeds at once.
    const next = await b.tryAcquire(r, { ttlMs: 1_000 });
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('an abort that races with a free lock gives the grant back before the acquire rejects', async () => {
    const [a, b] = [client(), client()];
    // Connected first, so the request below is on its way when the abort comes.
    await (await a.acquire(resource(), { ttlMs: 1_000 })).release();
    for (let i = 0; i < 20; i++) {
      const r = resource();
      const controller = new AbortController();
      const aborted = a.acquire(r, { ttlMs: 30_000, signal: controller.signal });
      controller.abort(new Error('caller gave up'));
      await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
      // Granted on the server (the lock was free), and already given back.
      const next = await b.tryAcquire(r, { ttlMs: 1_000 });
      expect(next).not.toBeNull();
      await next?.release();
    }
  });

  it('closed right after an acquire began, leaves no queue entry behind for a release to grant', async () => {
    const [a, b] = [client(), client()];
    const r = resource();
    const lease = await a.acquire(r, { ttlMs: 10_000 });
    // b has waited once before, so its wake-up subscription is up and a wait starts at once.
    await expect(b.acquire(r, { ttlMs: 1_000, waitMs: 50 })).rejects.toBeInstanceOf(LockTimeoutError);
    // close() lands while b's fast path is in flight; the wait that would follow must not start
    // after close() found nothing in flight and freed the connection.
    const waiting = b.acquire(r, { ttlMs: 10_000, waitMs: 5_000 }).catch((error: unknown) => error);
    await b.close();
    expect(await waiting).toBeInstanceOf(Error);
    const direct = new Redis(`redis://${endpoint}`);
    try {
      expect(await direct.zcard(`fencekit:{${r}}:queue`)).toBe(0);
      await lease.release();
      // Nobody queued, so the lock is free, not handed to the closed client.
      expect(await direct.exists(`fencekit:{${r}}:lock`)).toBe(0);
    } finally {
      direct.disconnect();
    }
  });

  it('does not take a late message about an older hand-over as a grant', async () => {
    const [a, b] = [client(), client()];
    const r = resource();
    const lease = await a.acquire(r, { ttlMs: 10_000 });
    const waiting = b.acquire(r, { ttlMs: 10_000, waitMs: 1_000 }).catch((error: unknown) => error);
    await untilQueued(endpoint, r, 1);
    const direct = new Redis(`redis://${endpoint}`);
    try {
      // What a release that handed b the lock long ago would have sent, delivered only now: its
      // fence is no higher than the counter b's last "queued" answer saw, so that grant came
      // before and has lapsed since. a still holds the lock: b must keep waiting.
      const [waiter] = await queuedWaiters(direct, r);
      if (waiter === undefined) throw new Error('expected b queued');
      await direct.publish(waiter.channel, `${waiter.owner}|${lease.fence}`);
      expect(await waiting).toBeInstanceOf(LockTimeoutError);
      expect(lease.held).toBe(true);
    } finally {
      direct.disconnect();
    }
  });

  it('refuses extend and release from a holder whose lease another client took over', async () => {
    const [a, b] = [client(), client()];
    const r = resource();
    const stale = await a.acquire(r, { ttlMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(stale.held).toBe(false);
    expect(stale.signal.aborted).toBe(true);
    const fresh = await b.acquire(r, { ttlMs: 5_000 });
    await expect(stale.extend(1_000)).rejects.toBeInstanceOf(LockLostError);
    await expect(stale.release()).rejects.toBeInstanceOf(NotLockHolderError);
    expect(fresh.held).toBe(true);
    await fresh.extend(5_000);
    await fresh.release();
  });

  it('reports release by a lost holder when another client holds the lock', async () => {
    const [a, b] = [client(), client()];
    const r = resource();
    const stale = await a.acquire(r, { ttlMs: 60_000 });
    const raw = new Redis(`redis://${endpoint}`);
    try {
      await raw.set(`fencekit:{${r}}:lock`, 'someone-else', 'PX', 5_000);
    } finally {
      raw.disconnect();
    }
    await expect(stale.release()).rejects.toBeInstanceOf(NotLockHolderError);
    expect(await b.tryAcquire(r, { ttlMs: 1_000 })).toBeNull();
  });

  it("keeps its keys under the prefix, away from the application's keys", async () => {
    const r = resource();
    const lease = await client({ keyPrefix: 'app-locks:' }).acquire(r, { ttlMs: 5_000 });
    const raw = new Redis(`redis://${endpoint}`);
    try {
      expect(await raw.get(`app-locks:{${r}}:lock`)).toBe(lease.owner);
      expect(await raw.exists(r)).toBe(0);
    } finally {
      raw.disconnect();
    }
    await lease.release();
  });

  it('rejects bad arguments with a typed error naming them', async () => {
    const c = client();
    await expect(c.acquire('', { ttlMs: 1_000 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.acquire(resource(), { ttlMs: -1 })).rejects.toThrow(/ttlMs/);
    // Redis takes whole milliseconds only: refused before anything is sent.
    await expect(c.acquire(resource(), { ttlMs: 1_000.5 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.tryAcquire(resource(), { ttlMs: 0.5 })).rejects.toThrow(/whole number/);
    const lease = await c.acquire(resource(), { ttlMs: 1_000 });
    await expect(lease.extend(1_500.5)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(lease.held).toBe(true);
    await lease.release();
  });
});
