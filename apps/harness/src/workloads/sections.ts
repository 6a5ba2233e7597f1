import { acquireHeld, type HeldLease, reclaimHeld } from './held-lease.js';
import type { WorkloadContext } from './types.js';
import { sleep } from './util.js';

/**
 * Sessions a client waits after a release it could not confirm: one for the servers to let the lease
 * go at the latest, the rest for the cluster to recover from whatever failed the release.
 */
export const RELEASE_FAILED_BACKOFF_SESSIONS = 3;

/** Names each grant of one client uniquely in the history: `c<client>.<n>`. */
export function grantIds(client: number): () => string {
  let n = 0;
  return () => `c${client}.${++n}`;
}

/**
 * The loop the lock workloads share: acquire (one recorded op), the workload's section, release (one
 * recorded op, by `await using`), until the client is stopped or the section says there is nothing left
 * to do. A lease that ended unsure during its section is reclaimed when the backend can (ZooKeeper's
 * Curator pattern), and the section runs again under the reclaimed lease; the old lease's scope ends
 * (its release is recorded) before the new lease is used.
 *
 * A client whose release failed stays out of the contest for `RELEASE_FAILED_BACKOFF_SESSIONS`
 * sessions before it asks again, as a careful user does when it cannot tell whether the lock is still
 * its own: by then the adapter has withdrawn the key, or the servers have expired it with the session.
 * Asking again at once would hide a key left behind on a live session (etcd: the new request's key is
 * that very key, so it is granted at once and frees the lock), which is what starves everyone else.
 */
export async function lockedSections(
  ctx: WorkloadContext,
  resource: string,
  section: (held: HeldLease) => Promise<'more' | 'done'>,
): Promise<void> {
  const nextGrant = grantIds(ctx.config.index);
  while (!ctx.stopping.aborted) {
    let lease = await acquireHeld(ctx, resource, nextGrant());
    if (!lease) {
      await sleep(ctx.random() * 20, ctx.stopping);
      continue;
    }
    let next: 'more' | 'done' = 'more';
    const ended: HeldLease[] = [];
    while (lease) {
      await using current: HeldLease = lease;
      ended.push(current);
      next = await section(current);
      lease = next === 'done' ? undefined : await reclaimHeld(ctx, current, nextGrant());
    }
    if (next === 'done') return;
    if (ended.some((held) => held.releaseFailed)) {
      await sleep(RELEASE_FAILED_BACKOFF_SESSIONS * ctx.config.sessionMs, ctx.stopping);
    }
  }
}
