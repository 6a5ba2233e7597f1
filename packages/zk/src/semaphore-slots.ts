import { InvalidArgumentError, sleep } from '@fencekit/core';
import { queueOrder } from './paths.js';
import { EntryGoneError, type QueueEntry } from './queue.js';
import type { ZkSession } from './session.js';
import { otherLimit, permitsOf } from './shared-nodes.js';
import { type Cancel, RETRY_PAUSE_MS } from './wait-scope.js';
import { isUncertain, ZkCode, zkCode } from './zk-errors.js';
import { zxidOf } from './zxid.js';

const NODE_DELETED = 2;

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

/** The permits an entry name asks for (0 for anything in the folder that is not a semaphore entry). */
const permitsAskedBy = (child: string): number => permitsOf(child)?.permits ?? 0;

/**
 * Whether `entry` fits: the permits of every entry before it in `order` plus its own are at most
 * `limit`. Holders and waiters share one folder of sequential nodes, so this is strict FIFO by
 * construction (an entry is granted only once every entry before it fits too).
 */
export function fitsIn(order: readonly string[], entry: string, limit: number): boolean {
  const index = order.indexOf(entry);
  if (index < 0) return false;
  let sum = 0;
  for (let i = 0; i <= index; i++) sum += permitsAskedBy(order[i] ?? '');
  return sum <= limit;
}

/**
 * Waits until the semaphore entry `entry` fits (see `fitsIn`) and resolves with its czxid, the fence:
 * nothing is written at the grant. `order` is the folder's listing from the join (may be empty).
 *
 * No herd, and no listing after the join: sequence numbers only grow, so the entries before ours can
 * only leave. Of those, the waiter watches (a GET_DATA watch each, pipelined) the nearest ones whose
 * permits, with its own, already exceed `limit`: while all of them stand it cannot fit, whatever the
 * entries before them do, so a release wakes only the at most `limit` waiters that have it in their
 * window. When one of them goes the waiter drops it and watches further back; a watch that finds its
 * node gone (NO_NODE) says so too. Once the entries it knows of that may still stand ask, with its own,
 * for at most `limit`, it fits: every entry before it is among them (none can join ahead), so it holds
 * its permits with no more request than the notification itself. After a reconnect it lists again
 * rather than trust that no deletion fell between. Throws `EntryGoneError` when its node or its
 * session is gone.
 */
export async function awaitSlot(
  session: ZkSession,
  name: string,
  limit: number,
  entry: QueueEntry,
  order: readonly string[],
  signal: Cancel,
): Promise<bigint> {
  const own = permitsAskedBy(entry.name);
  /** The entries before ours that may still stand, in queue order; undefined: list the folder. */
  let ahead: string[] | undefined;
  const watched = new Set<string>();
  let wake: () => void = () => {};
  let woken = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const rearm = () => {
    woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
  };
  const known = (listing: readonly string[]): string[] => {
    assertSameLimit(name, limit, listing);
    const index = listing.indexOf(entry.name);
    if (index < 0) throw new EntryGoneError(entry, 'its node is no longer in the semaphore');
    return listing.slice(0, index).filter((child) => permitsAskedBy(child) > 0);
  };
  if (order.length > 0) ahead = known(order);
  for (;;) {
    signal.throwIfAborted();
    if (session.generation !== entry.generation) throw new EntryGoneError(entry, 'its session expired');
    try {
      if (ahead === undefined) {
        ahead = known(queueOrder((await session.children(entry.folder, undefined, { signal })).children));
        // After a reconnect the library re-arms its watches, but a deletion may have fallen between:
        // watch again from this listing (a duplicate listener only wakes this wait once more).
        watched.clear();
      }
      const window = windowOf(ahead, own, limit);
      if (window === undefined) return entry.czxid ?? (await czxidOf(session, entry, signal));
      const toWatch = window.filter((child) => !watched.has(child));
      if (toWatch.length > 0) {
        const current = ahead;
        const reads = session.pipeline(() =>
          toWatch.map((child) =>
            session
              .getData(
                `${entry.folder}/${child}`,
                (event) => {
                  watched.delete(child);
                  if (event.type === NODE_DELETED) {
                    const at = current.indexOf(child);
                    if (at >= 0) current.splice(at, 1);
                  }
                  wake();
                },
                { signal },
              )
              .then(
                () => true,
                (error: unknown) => {
                  if (zkCode(error) === ZkCode.NO_NODE) return false;
                  throw error;
                },
              ),
          ),
        );
        const present = await Promise.all(reads);
        for (const [i, child] of toWatch.entries()) {
          if (present[i]) watched.add(child);
          else {
            const at = current.indexOf(child);
            if (at >= 0) current.splice(at, 1);
          }
        }
        // Some were gone already: the window reaches further back (or the entry fits). Look again.
        if (present.includes(false)) continue;
      }
      if (windowOf(ahead, own, limit) === undefined) continue;
      const event = await untilWoken(session, entry, woken, signal);
      rearm();
      if (event === 'reconnected') ahead = undefined;
    } catch (error) {
      if (!isUncertain(error)) throw error;
      ahead = undefined;
      await sleep(RETRY_PAUSE_MS, signal);
    }
  }
}

/**
 * The nearest entries of `ahead` (queue order) whose permits, with `own`, exceed `limit`; undefined
 * when even all of them together leave room (the waiter fits).
 */
function windowOf(ahead: readonly string[], own: number, limit: number): string[] | undefined {
  let sum = own;
  for (let i = ahead.length - 1; i >= 0; i--) {
    sum += permitsAskedBy(ahead[i] ?? '');
    if (sum > limit) return ahead.slice(i);
  }
  return undefined;
}

async function czxidOf(session: ZkSession, entry: QueueEntry, signal: Cancel): Promise<bigint> {
  const stat = await session.exists(entry.path, undefined, { signal });
  if (!stat || session.generation !== entry.generation) {
    throw new EntryGoneError(entry, 'its node was deleted');
  }
  entry.czxid = zxidOf(stat.czxid);
  return entry.czxid;
}

/** Waits for a watch to fire, the signal to abort, or the session to come back or end. */
async function untilWoken(
  session: ZkSession,
  entry: QueueEntry,
  woken: Promise<void>,
  signal: Cancel,
): Promise<'watch' | 'reconnected'> {
  signal.throwIfAborted();
  let offSession: () => void = () => {};
  let onAbort: () => void = () => {};
  try {
    return await new Promise<'watch' | 'reconnected'>((resolve, reject) => {
      woken.then(() => resolve('watch'));
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      offSession = session.on((event, generation) => {
        if (generation !== entry.generation) return;
        if (event === 'expired') reject(new EntryGoneError(entry, 'its session expired'));
        else if (event === 'reconnected') resolve('reconnected');
      });
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    offSession();
  }
}
