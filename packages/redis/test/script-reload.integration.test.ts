import { randomUUID } from 'node:crypto';
import { RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';

const endpoint = redisEndpoint();
const opened: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

describe('scripts called by SHA', () => {
  it('keep working after SCRIPT FLUSH (NOSCRIPT → EVAL), fences still increasing', async () => {
    const client = new RedisLockClient({ connection: `redis://${endpoint}` });
    const admin = new Redis(`redis://${endpoint}`);
    opened.push(client, { close: () => admin.quit() });
    const resource = `reload-${randomUUID()}`;
    const first = await client.acquire(resource, { ttlMs: 5_000 });
    await first.release();
    await admin.script('FLUSH');
    // Every script on its first call after the flush: acquire (fast path), extend, release.
    const second = await client.acquire(resource, { ttlMs: 5_000 });
    expect(second.fence).toBeGreaterThan(first.fence);
    await admin.script('FLUSH');
    await second.extend(5_000);
    await admin.script('FLUSH');
    await second.release();
    expect(await admin.exists(`fencekit:{${resource}}:lock`)).toBe(0);
  });
});
