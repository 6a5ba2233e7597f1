import { Redis } from 'ioredis';

/**
 * Waits (bounded) until the lock key of `resource` reads `expected` on every node at `endpoints`
 * (`null`: no key; reading it also expires a key whose time is up). A Redlock acquire returns at a
 * quorum, so its requests to the other nodes may still be on their way: a test that then changes
 * single nodes (skews a clock, deletes a copy) must wait for them, or it races them.
 */
export async function untilLockOnEvery(
  endpoints: readonly string[],
  resource: string,
  expected: string | null,
): Promise<void> {
  const connections = endpoints.map((e) => new Redis(`redis://${e}`));
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const values = await Promise.all(connections.map((c) => c.get(`fencekit:{${resource}}:lock`)));
      if (values.every((v) => v === expected)) return;
      if (Date.now() > deadline) {
        throw new Error(`lock of ${resource} not ${expected ?? 'gone'} on every node within 10 s: ${values}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    for (const c of connections) c.disconnect();
  }
}
