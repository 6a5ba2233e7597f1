import type { SharedLocks } from '../backends/shared-locks.js';
import type { Take } from './acquire.js';
import { acquireRecorded, type HeldLease } from './held-lease.js';
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

/**
 * Takes a shared grant as one recorded `acquire` op, as the lock workloads do (held-lease.ts): `extra`
 * (permits and limit, or mode) is recorded on the invoke and on the ok.
 */
export function acquireShared(
  ctx: WorkloadContext,
  resource: string,
  grant: string,
  extra: Record<string, unknown>,
  take: Take,
): Promise<HeldLease | undefined> {
  return acquireRecorded(ctx, resource, grant, resource, take, { extra });
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
