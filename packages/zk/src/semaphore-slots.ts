import { InvalidArgumentError, sleep } from '@fencekit/core';
import { queueOrder } from './paths.js';
import { EntryGoneError, type QueueEntry } from './queue.js';
import type { ZkSession } from './session.js';
import { otherLimit, permitsOf } from './shared-nodes.js';
import { type Cancel, RETRY_PAUSE_MS } from './wait-scope.js';
import { isUncertain, ZkCode, zkCode } from './zk-errors.js';
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
 * No herd: sequence numbers only grow, so the entries before ours can only leave. The waiter watches
 * (a GET_DATA watch each, pipelined) only the nearest ones whose permits, with its own, already
 * exceed `limit`: while all of them stand it cannot fit, whatever the entries before them do, so a
 * release wakes only the at most `limit` waiters that have it in their window. A woken waiter lists
 * the folder once (no watch): the entries before its window leave unseen, and probing them one by one
 * cost a round trip each (a waiter that joined at the back of a long queue sat through up to a dozen
 * on the release that let it in). Then it fits, or it watches the new nearest entries. After a
 * reconnect it watches again from a fresh listing rather than trust that no deletion fell between.
 * Throws `EntryGoneError` when its node or its session is gone.
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
    const index = listing.indexOf(entry.name);
    if (index < 0) throw new EntryGoneError(entry, 'its node is no longer in the semaphore');
    const before = listing.slice(0, index);
    // Only the entries ahead can make this one wrong: a client behind that names another count is its own
    // mistake, refused when it looks (it would otherwise cost this waiter its place, as review #19 found).
    assertSameLimit(name, limit, before);
    return before.filter((child) => permitsAskedBy(child) > 0);
  };
  if (order.length > 0) ahead = known(order);
  for (;;) {
    signal.throwIfAborted();
    if (session.generation !== entry.generation) throw new EntryGoneError(entry, 'its session expired');
    try {
      if (ahead === undefined) {
        ahead = known(queueOrder((await session.children(entry.folder, undefined, { signal })).children));
      }
      const window = windowOf(ahead, own, limit);
      if (window === undefined) return entry.czxid ?? (await czxidOf(session, entry, signal));
      const toWatch = window.filter((child) => !watched.has(child));
      if (toWatch.length > 0) {
        const reads = session.pipeline(() =>
          toWatch.map((child) =>
            session
              .getData(
                `${entry.folder}/${child}`,
                () => {
                  // Deleted (or changed, which fencekit never does): its watch is spent either way.
                  watched.delete(child);
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
        for (const [i, child] of toWatch.entries()) if (present[i]) watched.add(child);
        // Gone already: so may be others before it. List again rather than probe them one by one.
        if (present.includes(false)) {
          ahead = undefined;
          continue;
        }
      }
      const event = await untilWoken(session, entry, woken, signal);
      rearm();
      if (event === 'reconnected') watched.clear();
      // One listing tells what else went meanwhile (the entries before the watched ones leave unseen).
      ahead = undefined;
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
