import { type Fence, type Lease, LockTimeoutError } from '@fencekit/core';
import type { SharedLocks } from '../backends/shared-locks.js';
import { documentedBounds } from '../client/bounds.js';
import { grantFact } from '../client/lease-facts.js';
import { ok } from '../client/recorder.js';
import { drawCancel } from './cancel.js';
import { HeldLease } from './held-lease.js';
import { grantIds, RELEASE_FAILED_BACKOFF_SESSIONS } from './sections.js';
import type { WorkloadContext } from './types.js';
import { sleep } from './util.js';

/** The workloads that run on the backend's semaphores and read-write locks rather than its mutex. */
export const SHARED_LOCK_WORKLOADS: ReadonlySet<string> = new Set(['semaphore', 'rwlock']);

/** How many permits the `semaphore` workload's semaphore has: half the clients (at least 1), so they contend. */
export function semaphorePermits(clients: number): number {
  return Math.max(1, Math.floor(clients / 2));
}

/** The shared-lock client of a `semaphore` or `rwlock` run (client/main.ts opens it for those workloads). */
export function sharedLocksOf(ctx: WorkloadContext): SharedLocks {
  if (ctx.sharedLocks === undefined) {
    throw new Error(
      `the ${ctx.config.workload} workload needs the backend's semaphores and read-write locks`,
    );
  }
  return ctx.sharedLocks;
}

/** One way to take a shared grant: blocking (`wait`) or one attempt (`poll`, retried by `takeShared`). */
export interface SharedTake {
  wait(options: { ttlMs: number; waitMs: number; signal: AbortSignal }): Promise<Lease<Fence | undefined>>;
  once(options: { ttlMs: number; signal: AbortSignal }): Promise<Lease<Fence | undefined> | null>;
}

/**
 * Takes a shared grant as one recorded `acquire` op, as the lock workloads do (held-lease.ts): the
 * invoke carries what is asked (`extra`: permits and limit, or mode) and the wait's bound, the ok the
 * grant's lease facts with the same `extra`, which the semaphore and read-write checks weigh grants by.
 */
export async function acquireShared(
  ctx: WorkloadContext,
  resource: string,
  grant: string,
  extra: Record<string, unknown>,
  take: SharedTake,
): Promise<HeldLease | undefined> {
  const { config, recorder } = ctx;
  const cancel = drawCancel(config, resource, ctx.stopping, ctx.random);
  const waitMs =
    cancel !== undefined && 'waitMs' in cancel.recorded ? cancel.recorded.waitMs : config.opTimeoutMs;
  const bound =
    config.acquire === 'wait'
      ? {
          waitMs,
          boundMs: documentedBounds(config.backend, config.ttlMs, config.sessionMs).acquireMs(waitMs),
        }
      : { pollMs: waitMs };
  const asked = {
    resource,
    ...extra,
    ...bound,
    ...(cancel !== undefined && 'abortAfterMs' in cancel.recorded ? cancel.recorded : {}),
  };
  let held: HeldLease | undefined;
  try {
    await recorder.op('acquire', asked, async () => {
      const lease = await takeShared(ctx, take, cancel?.signal ?? ctx.stopping, waitMs);
      held = new HeldLease(lease, grant, resource, ctx);
      return ok({ ...grantFact(lease, grant, resource), ...extra });
    });
  } finally {
    cancel?.dispose();
  }
  return held;
}

async function takeShared(
  ctx: WorkloadContext,
  take: SharedTake,
  stopping: AbortSignal,
  waitMs: number,
): Promise<Lease<Fence | undefined>> {
  const { config } = ctx;
  if (config.acquire === 'wait') {
    return take.wait({ ttlMs: config.ttlMs, waitMs, signal: stopping });
  }
  const deadline = performance.now() + waitMs;
  for (let attempt = 0; attempt < 100_000 && !stopping.aborted; attempt++) {
    const lease = await take.once({ ttlMs: config.ttlMs, signal: stopping });
    if (lease) return lease;
    if (performance.now() >= deadline) break;
    await sleep(5 + ctx.random() * 20, stopping);
  }
  // The same typed timeout a blocking acquire gives: the op is a `fail`, certain not to have taken effect.
  throw new LockTimeoutError('shared grant', waitMs);
}

/**
 * The loop of the shared-lock workloads: a grant (`grant(id)`, one recorded op), the section, the
 * release (one recorded op, by `await using`), until the client is stopped. A client whose release
 * failed stays out for `RELEASE_FAILED_BACKOFF_SESSIONS` sessions, as in the lock workloads (sections.ts).
 */
export async function sharedSections(
  ctx: WorkloadContext,
  grant: (id: string) => Promise<HeldLease | undefined>,
  section: (held: HeldLease) => Promise<void>,
): Promise<void> {
  const nextGrant = grantIds(ctx.config.index);
  while (!ctx.stopping.aborted) {
    const held = await grant(nextGrant());
    if (!held) {
      await sleep(ctx.random() * 20, ctx.stopping);
      continue;
    }
    {
      await using current: HeldLease = held;
      await section(current);
    }
    if (held.releaseFailed) {
      await sleep(RELEASE_FAILED_BACKOFF_SESSIONS * ctx.config.sessionMs, ctx.stopping);
    }
  }
}
