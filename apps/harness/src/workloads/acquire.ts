import { type Fence, type Lease, type LockClient, LockTimeoutError } from '@fencekit/core';
import type { ClientConfig } from './types.js';
import { sleep } from './util.js';

/** One way to take a grant: blocking (`wait`) or one attempt (`once`, retried by `takeLock` when polling). */
export interface Take {
  wait(options: { ttlMs: number; waitMs: number; signal: AbortSignal }): Promise<Lease<Fence | undefined>>;
  once(options: { ttlMs: number; signal: AbortSignal }): Promise<Lease<Fence | undefined> | null>;
}

/** A mutex client's `Take` of `key`. */
export function mutexTake(locks: LockClient<Fence | undefined>, key: string): Take {
  return { wait: (o) => locks.acquire(key, o), once: (o) => locks.tryAcquire(key, o) };
}

/**
 * How a client takes the lock. `wait` is the backend's own blocking acquire (queues, wake-ups);
 * `poll` retries `tryAcquire` with a short jittered pause, as node-redlock's retryCount/retryDelay do,
 * so each grant is decided by the nodes' state alone — what Kleppmann's Redlock diagram assumes.
 * `waitMs`: the bound of this acquire (a cancelled one's is shorter, cancel.ts). `name` names the lock
 * in the timeout.
 */
export async function takeLock(
  take: Take,
  name: string,
  config: ClientConfig,
  signal: AbortSignal,
  random: () => number,
  waitMs: number = config.opTimeoutMs,
): Promise<Lease<Fence | undefined>> {
  if (config.acquire === 'wait') {
    return take.wait({ ttlMs: config.ttlMs, waitMs, signal });
  }
  const deadline = performance.now() + waitMs;
  for (let attempt = 0; attempt < 100_000 && !signal.aborted; attempt++) {
    const lease = await take.once({ ttlMs: config.ttlMs, signal });
    if (lease) return lease;
    if (performance.now() >= deadline) break;
    await sleep(5 + random() * 20, signal);
  }
  // The same typed timeout a blocking acquire gives: the op is a `fail`, certain not to have taken effect.
  throw new LockTimeoutError(name, waitMs);
}
