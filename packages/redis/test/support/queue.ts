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
