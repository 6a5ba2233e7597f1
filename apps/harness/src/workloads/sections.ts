import { acquireHeld, type HeldLease, reclaimHeld } from './held-lease.js';
import type { WorkloadContext } from './types.js';
import { sleep } from './util.js';

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
    while (lease) {
      await using current: HeldLease = lease;
      next = await section(current);
      lease = next === 'done' ? undefined : await reclaimHeld(ctx, current, nextGrant());
    }
    if (next === 'done') return;
  }
}
