import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { ioredisSendClock } from '../src/client/send-clock.js';

interface RedisLike {
  set(key: string, value: string): Promise<unknown>;
  disconnect(): void;
}
/** The ioredis the adapter resolves, as the tap does. */
const { Redis } = createRequire(import.meta.resolve('@fencekit/redis'))('ioredis') as {
  Redis: new (options: object) => RedisLike;
};

const opened: RedisLike[] = [];
afterEach(() => {
  for (const r of opened.splice(0)) r.disconnect();
});

/** A client that never connects (nothing listens on port 1): commands wait in its offline queue. */
function offline(): RedisLike {
  const redis = new Redis({
    port: 1,
    lazyConnect: true,
    enableOfflineQueue: true,
    retryStrategy: () => null,
  });
  opened.push(redis);
  return redis;
}

describe('the send clock (ioredis sendCommand tap)', () => {
  it('gives when a command naming a token was handed to ioredis, once, on the history clock', async () => {
    const clock = ioredisSendClock('@fencekit/redis');
    const owner = randomUUID();
    const before = process.hrtime.bigint();
    void offline()
      .set('k', owner)
      .catch(() => undefined);
    const after = process.hrtime.bigint();
    const sentAt = clock.take(owner);
    expect(sentAt).toBeDefined();
    expect(sentAt! >= before && sentAt! <= after).toBe(true);
    // Taken: a later grant cannot reuse it.
    expect(clock.take(owner)).toBeUndefined();
    expect(clock.take(randomUUID())).toBeUndefined();
  });

  it('keeps the last hand-over of a token, and one tap per process (the redlock clock shares it)', async () => {
    const redis = ioredisSendClock('@fencekit/redis');
    const redlock = ioredisSendClock('@fencekit/redlock');
    const owner = randomUUID();
    const client = offline();
    void client.set('a', owner).catch(() => undefined);
    const between = process.hrtime.bigint();
    void client.set('b', owner).catch(() => undefined);
    expect(redlock.take(owner)! >= between).toBe(true);
    expect(redis.take(owner)).toBeUndefined();
  });

  it('forgets the oldest tokens past 4 096 (polling leaves one per refused attempt)', async () => {
    const clock = ioredisSendClock('@fencekit/redis');
    const client = offline();
    const tokens = Array.from({ length: 4_200 }, () => randomUUID());
    for (const token of tokens) void client.set('k', token).catch(() => undefined);
    expect(clock.take(tokens[0]!)).toBeUndefined();
    expect(clock.take(tokens.at(-1)!)).toBeDefined();
  });
});
