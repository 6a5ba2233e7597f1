import { type Fence, type Lease, type LockClient, LockTimeoutError } from '@fencekit/core';
import type { ClientConfig } from './types.js';
import { sleep } from './util.js';

/**
 * How a client takes the lock. `wait` is the backend's own blocking acquire (queues, wake-ups);
 * `poll` retries `tryAcquire` with a short jittered pause, as node-redlock's retryCount/retryDelay do,
 * so each grant is decided by the nodes' state alone — what Kleppmann's Redlock diagram assumes.
 * `waitMs`: the bound of this acquire (a cancelled one's is shorter, cancel.ts).
 */
export async function takeLock(
  locks: LockClient<Fence | undefined>,
  key: string,
  config: ClientConfig,
  signal: AbortSignal,
  random: () => number,
  waitMs: number = config.opTimeoutMs,
): Promise<Lease<Fence | undefined>> {
  if (config.acquire === 'wait') {
    return locks.acquire(key, { ttlMs: config.ttlMs, waitMs, signal });
  }
  const deadline = performance.now() + waitMs;
  for (let attempt = 0; attempt < 100_000 && !signal.aborted; attempt++) {
    const lease = await locks.tryAcquire(key, { ttlMs: config.ttlMs, signal });
    if (lease) return lease;
    if (performance.now() >= deadline) break;
    await sleep(5 + random() * 20, signal);
  }
  throw new LockTimeoutError(key, waitMs);
}
