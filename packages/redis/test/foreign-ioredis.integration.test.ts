import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';

/**
 * A second copy of ioredis, as an application gets with another 5.x minor than fencekit's or a nested
 * install: the same code loaded again, so its classes are not the ones fencekit imported.
 */
function foreignIoredis(): typeof Redis {
  const require = createRequire(import.meta.url);
  const saved = new Map<string, NodeJS.Module>();
  const root = require.resolve('ioredis').replace(/built[\\/]index\.js$/, '');
  for (const [key, module] of Object.entries(require.cache)) {
    if (module && key.startsWith(root)) {
      saved.set(key, module);
      delete require.cache[key];
    }
  }
  try {
    return (require('ioredis') as { Redis: typeof Redis }).Redis;
  } finally {
    for (const key of Object.keys(require.cache)) if (key.startsWith(root)) delete require.cache[key];
    for (const [key, module] of saved) require.cache[key] = module;
  }
}

describe("a caller's ioredis from another copy of the library", () => {
  it('is the connection fencekit uses (detected by shape, not instanceof), and stays open after close()', async () => {
    const Foreign = foreignIoredis();
    const [host, port] = redisEndpoint().split(':');
    const own = new Foreign(Number(port), host ?? '127.0.0.1');
    expect(own instanceof Redis).toBe(false);
    const client = new RedisLockClient({ connection: own, keyPrefix: 'foreign:' });
    try {
      expect(client.redis).toBe(own);
      const resource = `foreign-${randomUUID()}`;
      const lease = await client.acquire(resource, { ttlMs: 10_000, waitMs: 5_000 });
      expect(await own.get(`foreign:{${resource}}:lock`)).not.toBeNull();
      // A waiter goes through the queue, the hand-off in the release script and the pub/sub wake-up.
      const waiting = client.acquire(resource, { ttlMs: 10_000, waitMs: 5_000 });
      await lease.release();
      const next = await waiting;
      expect(next.fence).toBe(lease.fence + 1n);
      await next.release();
    } finally {
      await client.close();
    }
    expect(own.status).toBe('ready');
    await own.quit();
  });
});
