import { InvalidArgumentError, sleep } from '@fencekit/core';
import { EntryGoneError, type QueueEntry } from './queue.js';
import type { ZkSession } from './session.js';
import { otherLimit, permitsIn } from './shared-nodes.js';
import { type Cancel, RETRY_PAUSE_MS } from './wait-scope.js';
import { isUncertain } from './zk-errors.js';
import { zxidOf } from './zxid.js';

/** Refuses a semaphore named with another size than the holders or waiters in `children` use. */
export function assertSameLimit(name: string, limit: number, children: readonly string[]): void {
  const other = otherLimit(children, limit);
  if (other !== undefined) {
    throw new InvalidArgumentError(
      'permits',
      limit,
      `${other}, the permit count the holders or waiters of semaphore "${name}" use`,
    );
  }
}

/**
 * The head of a semaphore's queue, its lease node already created in the leases folder, waits here
 * until the lease nodes there (holders' and its own) ask for at most `limit` permits. Only the head
 * lists and watches that folder (Curator's InterProcessSemaphoreV2: the queue is the semaphore's
 * internal mutex), so a release wakes one waiter; and since only the head creates lease nodes, their
 * czxids follow grant order: that is the fence. `order` is the listing known from the create (may be
 * empty). Throws `EntryGoneError` when the lease node or its session is gone.
 */
export async function awaitRoom(
  session: ZkSession,
  name: string,
  limit: number,
  entry: QueueEntry,
  order: readonly string[],
  signal: Cancel,
): Promise<bigint> {
  let children: readonly string[] | undefined = order.length > 0 ? order : undefined;
  for (;;) {
    signal.throwIfAborted();
    if (session.generation !== entry.generation) throw new EntryGoneError(entry, 'its session expired');
    let changed: Promise<void> | undefined;
    try {
      if (children === undefined) {
        let fire: () => void = () => {};
        changed = new Promise<void>((resolve) => {
          fire = resolve;
        });
        children = (await session.children(entry.folder, () => fire(), { signal })).children;
      }
      assertSameLimit(name, limit, children);
      if (!children.includes(entry.name)) throw new EntryGoneError(entry, 'its lease node was deleted');
      if (permitsIn(children) <= limit) {
        if (entry.czxid !== undefined) return entry.czxid;
        const stat = await session.exists(entry.path, undefined, { signal });
        if (!stat) throw new EntryGoneError(entry, 'its lease node was deleted');
        entry.czxid = zxidOf(stat.czxid);
        return entry.czxid;
      }
      children = undefined;
      if (changed) await untilChanged(session, entry, changed, signal);
    } catch (error) {
      if (!isUncertain(error)) throw error;
      children = undefined;
      await sleep(RETRY_PAUSE_MS, signal);
    }
  }
}

/** Waits for the folder's watch to fire, the signal to abort, or the session to come back or end. */
async function untilChanged(
  session: ZkSession,
  entry: QueueEntry,
  changed: Promise<void>,
  signal: Cancel,
): Promise<void> {
  signal.throwIfAborted();
  let offSession: () => void = () => {};
  let onAbort: () => void = () => {};
  try {
    await new Promise<void>((resolve, reject) => {
      changed.then(resolve);
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      offSession = session.on((event, generation) => {
        if (generation !== entry.generation) return;
        if (event === 'expired') reject(new EntryGoneError(entry, 'its session expired'));
        // After a disconnect, list again rather than trust the watch saw every deletion.
        else if (event === 'reconnected') resolve();
      });
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    offSession();
  }
}
