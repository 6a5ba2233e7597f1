import type { Fence, LockClient } from '@fencekit/core';
import { sleep } from './util.js';

/** The part of a leadership the election workload uses. */
export interface HeldLeadership {
  readonly term: string;
  readonly signal: AbortSignal;
  readonly isLeader: boolean;
  resign(): Promise<void>;
}

/**
 * Leadership from a plain lock, for backends without an election recipe: the leader is the lease
 * holder, its term the lease's fence, and it keeps the lease by extending it every third of the TTL.
 * One failed extension ends the leadership (its signal aborts).
 */
export async function campaignWithLock(
  locks: LockClient<Fence | undefined>,
  key: string,
  ttlMs: number,
  waitMs: number,
): Promise<HeldLeadership> {
  const lease = await locks.acquire(key, { ttlMs, waitMs });
  if (lease.fence === undefined) {
    await lease.release().catch(() => undefined);
    throw new Error(`${locks.backend} gives no fence, so a lock-based leadership has no term`);
  }
  const stop = new AbortController();
  const keeper = (async () => {
    while (!stop.signal.aborted && lease.held) {
      await sleep(ttlMs / 3, stop.signal);
      if (stop.signal.aborted) return;
      try {
        await lease.extend(ttlMs);
      } catch {
        return; // the lease's own signal reports the loss
      }
    }
  })();
  return {
    term: lease.fence.toString(),
    signal: lease.signal,
    get isLeader() {
      return lease.held;
    },
    async resign() {
      stop.abort();
      await keeper;
      await lease.release().catch(() => undefined);
    },
  };
}
