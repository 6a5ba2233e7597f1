import { type Fence, type Lease, type LockClient, LockTimeoutError, monotonicNow } from '@fencekit/core';
import { ok } from '../client/recorder.js';
import type { ClientConfig, WorkloadContext } from './types.js';
import { fenceOf, sleep } from './util.js';

/**
 * How a client takes the lock. `wait` is the backend's own blocking acquire (queues, wake-ups);
 * `poll` retries `tryAcquire` with a short jittered pause, as node-redlock's retryCount/retryDelay do,
 * so each grant is decided by the nodes' state alone — what Kleppmann's Redlock diagram assumes.
 */
export async function takeLock(
  locks: LockClient<Fence | undefined>,
  key: string,
  config: ClientConfig,
  signal: AbortSignal,
  random: () => number,
): Promise<Lease<Fence | undefined>> {
  if (config.acquire === 'wait') {
    return locks.acquire(key, { ttlMs: config.ttlMs, waitMs: config.opTimeoutMs, signal });
  }
  const deadline = performance.now() + config.opTimeoutMs;
  for (let attempt = 0; attempt < 100_000 && !signal.aborted; attempt++) {
    const lease = await locks.tryAcquire(key, { ttlMs: config.ttlMs, signal });
    if (lease) return lease;
    if (performance.now() >= deadline) break;
    await sleep(5 + random() * 20, signal);
  }
  throw new LockTimeoutError(key, config.opTimeoutMs);
}

/**
 * The loop the lock workloads share: acquire (one recorded op), the workload's section, release (one
 * recorded op), until the client is stopped or the section says there is nothing left to do. The
 * acquire's result carries the fence and the validity left at the grant (`validMs`, by the client's
 * own clock), so a scenario can show a grant was still valid when another client got the lock.
 */
export async function lockedSections(
  ctx: WorkloadContext,
  resource: string,
  section: (lease: Lease<Fence | undefined>, fence: string | undefined) => Promise<'more' | 'done'>,
): Promise<void> {
  const { config, locks, recorder, stopping } = ctx;
  const key = `${config.namespace}:${resource}`;
  while (!stopping.aborted) {
    let lease: Lease<Fence | undefined> | undefined;
    const acquired = await recorder.op('acquire', { resource }, async () => {
      lease = await takeLock(locks, key, config, stopping, ctx.random);
      return ok({ fence: fenceOf(lease) ?? null, validMs: Math.round(lease.validUntil - monotonicNow()) });
    });
    if (acquired.type !== 'ok' || !lease) {
      await sleep(ctx.random() * 20, stopping);
      continue;
    }
    const held = lease;
    const fence = fenceOf(held);
    const next = await section(held, fence);
    await recorder.op('release', { fence: fence ?? null }, async () => {
      await held.release();
      return ok();
    });
    if (next === 'done') return;
  }
}
