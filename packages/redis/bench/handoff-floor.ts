import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { SemaphoreContender } from './semaphore-contenders.js';

const TTL_MS = 10_000;

const acquireScript = `
if redis.call('LLEN', KEYS[2]) == 0 and redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  return 1
end
redis.call('RPUSH', KEYS[2], ARGV[2] .. '|' .. ARGV[4])
return 0`;

const releaseScript = `
redis.call('ZREM', KEYS[1], ARGV[1])
local next = redis.call('LPOP', KEYS[2])
if next then
  local bar = string.find(next, '|', 1, true)
  local owner = string.sub(next, 1, bar - 1)
  redis.call('ZADD', KEYS[1], ARGV[2], owner)
  redis.call('PUBLISH', string.sub(next, bar + 1), owner)
end
return 1`;

interface FloorCommands {
  floorAcquire(
    holders: string,
    queue: string,
    limit: number,
    owner: string,
    until: number,
    channel: string,
  ): Promise<number>;
  floorRelease(holders: string, queue: string, owner: string, until: number): Promise<number>;
}

/**
 * The least a fair semaphore that hands permits over by message can do, for the hand-off floor: a
 * holder set and a FIFO list; the release script grants the list's head and PUBLISHes to its
 * client's channel, and the waiter's acquire resolves on that message. No fence, no expiry purge,
 * no heartbeat, no lost-message recovery, no abort: not a usable lock, only the wake-up path's cost
 * (release round trip, PUBLISH, delivery to another connection, the waiter's event loop) in the same
 * ring, on the same machine, as the real contenders.
 */
export const handoffFloor: SemaphoreContender = {
  name: 'raw FIFO hand-off floor: list + PUBLISH',
  blocking: true,
  open([endpoint], permits) {
    const redis = new Redis(`redis://${endpoint}`);
    const subscriber = redis.duplicate();
    for (const connection of [redis, subscriber]) connection.on('error', () => undefined);
    redis.defineCommand('floorAcquire', { numberOfKeys: 2, lua: acquireScript });
    redis.defineCommand('floorRelease', { numberOfKeys: 2, lua: releaseScript });
    const commands = redis as unknown as FloorCommands;
    const channel = `floor-wake-${randomUUID()}`;
    const granted = new Map<string, () => void>();
    subscriber.on('message', (_channel: string, owner: string) => granted.get(owner)?.());
    const subscribed = subscriber.subscribe(channel);
    return {
      async lock(resource) {
        await subscribed;
        const holders = `${resource}:floor-holders`;
        const queue = `${resource}:floor-queue`;
        const owner = randomUUID();
        // Registered before the script runs: the grant's message may arrive before its reply.
        const handed = new Promise<void>((resolve) => granted.set(owner, resolve));
        const now = Date.now();
        if ((await commands.floorAcquire(holders, queue, permits, owner, now + TTL_MS, channel)) !== 1) {
          await handed;
        }
        granted.delete(owner);
        return async () => {
          await commands.floorRelease(holders, queue, owner, Date.now() + TTL_MS);
        };
      },
      async close() {
        await Promise.all([redis.quit(), subscriber.quit()]);
      },
    };
  },
};

/**
 * The bare message floor: one connection PUBLISHes, another (subscribed) receives, one message at
 * a time, `count` times about `gapMs` apart; each sample is PUBLISH sent → message delivered to
 * the subscriber's handler, ms. No script, no ring, nothing else in the process.
 */
export async function measurePublishFloor(endpoint: string, count: number, gapMs: number): Promise<number[]> {
  const publisher = new Redis(`redis://${endpoint}`);
  const subscriber = publisher.duplicate();
  for (const connection of [publisher, subscriber]) connection.on('error', () => undefined);
  const channel = `floor-ping-${randomUUID()}`;
  let delivered: (() => void) | undefined;
  subscriber.on('message', () => delivered?.());
  try {
    await subscriber.subscribe(channel);
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const arrived = new Promise<void>((resolve) => {
        delivered = resolve;
      });
      const sentAt = performance.now();
      void publisher.publish(channel, 'x');
      await arrived;
      samples.push(performance.now() - sentAt);
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    return samples;
  } finally {
    await Promise.all([publisher.quit(), subscriber.quit()]);
  }
}
