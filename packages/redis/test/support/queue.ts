import { Redis } from 'ioredis';

/**
 * Waits (bounded) until `count` waiters are queued for `resource` on the node at `endpoint`, so a
 * test can start the next waiter only once the previous one is really in line.
 */
export async function untilQueued(endpoint: string, resource: string, count: number): Promise<void> {
  const redis = new Redis(`redis://${endpoint}`);
  try {
    const deadline = Date.now() + 10_000;
    while (Number(await redis.zcard(`fencekit:{${resource}}:queue`)) < count) {
      if (Date.now() > deadline) throw new Error(`${count} waiters not queued on ${resource} within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * The waiters queued for `resource` as the scripts store them: owner token and wake channel (an
 * entry is "deadline|handoff|channel"), so a test can send what a release would.
 */
export async function queuedWaiters(
  redis: Redis,
  resource: string,
): Promise<{ owner: string; channel: string }[]> {
  const entries = Object.entries(await redis.hgetall(`fencekit:{${resource}}:waiters`));
  return entries
    .filter(([owner]) => !owner.startsWith(':'))
    .map(([owner, entry]) => ({ owner, channel: entry.split('|')[2] as string }));
}
