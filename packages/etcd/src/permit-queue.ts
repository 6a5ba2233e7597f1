import { InvalidArgumentError } from '@fencekit/core';
import {
  type IKeyValue,
  type IRequestOp,
  type ITxnResponse,
  SortOrder,
  SortTarget,
  type Watcher,
} from 'etcd3';
import { untilAborted } from './abort.js';
import { callOptions } from './connection.js';
import { toBackendError } from './errors.js';
import { prefixEnd } from './keys.js';
import type { PrefixWatches } from './prefix-watch.js';
import type { EtcdCalls, Ticket } from './queue.js';
import { recheckEveryMs } from './turn.js';
import type { TurnRule, TurnVerdict } from './wait.js';

/**
 * The permit engine behind the etcd semaphore and read-write lock: one prefix of keys, one per waiter
 * or holder, each attached to its session and carrying `limit:weight:owner` in its value, ordered by
 * create revision. A key may go once the weights of every key created before it plus its own fit in
 * `limit`. The keys that may go are therefore always a prefix of that order: strict FIFO by
 * construction (a large request is never passed), and no write at the grant — the join's put is the
 * only write of an acquire, the release's delete the only write of a hand-off. Fence = the key's create
 * revision, so fences increase in grant order, writers' strictly.
 *
 * Never more than `limit` held: a key that may go at revision R had at most `limit` in front of it and
 * itself then; after R keys in front of it can only be deleted (new keys are created behind it), so
 * every key that may go at any later time is counted among the keys in front of the newest one that
 * may go, and their sum never exceeds `limit`.
 *
 * Who wakes whom: a waiter blocked by one key alone (its weight and that key's do not fit together:
 * a writer behind anything, a reader behind a writer) watches only the newest such key ahead of it,
 * for its deletion, and re-reads then (the mutex's predecessor watch: a reader's release wakes the one
 * writer behind it, a writer's release wakes the readers behind it, and nobody else). Any other waiter
 * (a semaphore's, whose permits several holders could free) listens to the client's deletions-only
 * watch of the prefix (`prefix-watch.ts`) and counts the deletions in front of it on its own, without
 * a request: the release's delete event is the hand-off. Every waiter re-reads every `recheckEveryMs`
 * all the same (a watch through a silent member hears nothing, as `awaitTurn` explains).
 */
export interface PermitRoom {
  /** The permits prefix, ending in '/'. */
  readonly prefix: string;
  /** The semaphore or lock name, for errors. */
  readonly name: string;
  readonly limit: number;
  readonly weight: number;
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

/** The whole prefix, oldest first, values included (they carry the weights). */
function prefixRead(prefix: string): IRequestOp {
  return {
    request_range: {
      key: utf8(prefix),
      range_end: prefixEnd(prefix),
      sort_target: SortTarget.Create,
      sort_order: SortOrder.Ascend,
    },
  };
}

/** The value of a permit key: `limit:weight:owner` (the owner token is what a lease reports). */
export function permitValue(room: PermitRoom, owner: string): string {
  return `${room.limit}:${room.weight}:${owner}`;
}

/** A key in front of mine: its name, create revision and weight. */
interface Ahead {
  readonly key: string;
  readonly revision: bigint;
  readonly weight: number;
}

/**
 * The keys created before `ticket`'s, with their weights. A key whose value does not parse (not
 * written by this engine) counts as the whole `limit`: it blocks rather than lets one too many in.
 * A key naming another limit is refused with `InvalidArgumentError` (the holders and waiters of a
 * semaphore agree on its size).
 */
function aheadOf(room: PermitRoom, ticket: Ticket, kvs: readonly IKeyValue[]): Ahead[] {
  const ahead: Ahead[] = [];
  for (const kv of kvs) {
    const revision = BigInt(kv.create_revision);
    if (revision >= ticket.revision) continue;
    const match = /^(\d+):(\d+)(?::|$)/.exec(kv.value.toString('utf8'));
    if (match && Number(match[1]) !== room.limit) {
      throw new InvalidArgumentError(
        'permits',
        room.limit,
        `${match[1]}, the permit count the holders and waiters of "${room.name}" use`,
      );
    }
    ahead.push({ key: kv.key.toString('utf8'), revision, weight: match ? Number(match[2]) : room.limit });
  }
  return ahead;
}

const sum = (ahead: Iterable<Ahead>) => {
  let total = 0;
  for (const a of ahead) total += a.weight;
  return total;
};

/** The keys in front of mine as of revision `asOf`. */
interface View {
  readonly ahead: readonly Ahead[];
  readonly asOf: bigint;
}

/** The permit queue's rule for `waitForHead` (see `WaitOptions.turn`). */
export function permitTurn(calls: EtcdCalls, room: PermitRoom, watches: PrefixWatches): TurnRule {
  const fits = (ahead: Iterable<Ahead>) => sum(ahead) + room.weight <= room.limit;
  return {
    read: prefixRead(room.prefix),
    async wait(ticket, seen, stop): Promise<TurnVerdict> {
      // The queue was empty: mine is the only key (a weight never exceeds the limit).
      if (seen === undefined) return 'go';
      let view: View = { ahead: aheadOf(room, ticket, seen), asOf: ticket.revision };
      for (;;) {
        if (fits(view.ahead)) return 'go';
        if (!stop) return 'busy';
        const signal = stop();
        const woken = await untilChanged(calls, room, ticket, view, watches, signal);
        if (woken === 'go' || woken === 'gone') return woken;
        if (woken !== 'read') {
          view = woken;
          continue;
        }
        const now = await untilAborted(readQueue(calls, ticket), signal);
        if (now === 'gone') return 'gone';
        view = { ahead: aheadOf(room, ticket, now.kvs), asOf: now.asOf };
      }
    },
  };
}

/** My key (must still exist: else its session ended) and the queue, as of one revision. */
async function readQueue(
  calls: EtcdCalls,
  ticket: Ticket,
): Promise<{ kvs: IKeyValue[]; asOf: bigint } | 'gone'> {
  let response: ITxnResponse;
  try {
    response = await calls.etcd.kv.txn(
      {
        compare: [],
        success: [{ request_range: { key: utf8(ticket.key), keys_only: true } }, prefixRead(ticket.queue)],
        failure: [],
      },
      callOptions(calls.callTimeoutMs),
    );
  } catch (error) {
    throw toBackendError('reading the permit queue', error);
  }
  const mine = response.responses[0]?.response_range?.kvs[0];
  if (!mine || BigInt(mine.create_revision) !== ticket.revision) return 'gone';
  return { kvs: response.responses[1]?.response_range?.kvs ?? [], asOf: BigInt(response.header.revision) };
}

/**
 * Waits on one watch until `view` may change: 'go' (prefix mode: the deletions counted let me in),
 * 'gone' (my key was deleted), a fresh view whose blocker is another (blocker mode, after a re-read),
 * or 'read' (the blocker's deletion, or a watch that broke: the caller re-reads). Rejects with
 * `stop`'s reason.
 *
 * The watch starts at the current revision, not at `view.asOf + 1`: etcd serves a watch that starts in
 * the past from its "unsynced" group, caught up only every 100 ms, which under contention (the
 * revision moves between the read and the watch) put up to 100 ms on a hand-off. So once the watch is
 * created at revision W, a view older than W is read again, on the same watch, and only the
 * deletions after the newer view's revision are counted (those arriving during the read are held
 * back until it answers). The same re-read runs every `recheckEveryMs`, its failures ignored.
 */
async function untilChanged(
  calls: EtcdCalls,
  room: PermitRoom,
  ticket: Ticket,
  initial: View,
  watches: PrefixWatches,
  stop: AbortSignal,
): Promise<'go' | 'gone' | View | 'read'> {
  stop.throwIfAborted();
  let watcher: Watcher | undefined;
  let detach: (() => void) | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await new Promise<'go' | 'gone' | View | 'read'>((resolve, reject) => {
      onAbort = () => reject(stop.reason);
      stop.addEventListener('abort', onAbort, { once: true });
      const blockerOf = (ahead: readonly Ahead[]) =>
        ahead.findLast((a) => a.weight + room.weight > room.limit);
      // The newest key that alone keeps me out: only its deletion can let me in, so only it is watched.
      const blocker = blockerOf(initial.ahead);
      let asOf = initial.asOf;
      let left = new Map(initial.ahead.map((a) => [a.key, a]));
      let held = sum(left.values());
      let pending: IKeyValue[] | undefined;
      const count = (kv: IKeyValue) => {
        if (BigInt(kv.mod_revision) <= asOf) return;
        const key = kv.key.toString('utf8');
        if (key === ticket.key) return resolve('gone');
        if (blocker) {
          if (key === blocker.key) resolve('read');
          return;
        }
        const gone = left.get(key);
        if (!gone) return;
        left.delete(key);
        held -= gone.weight;
        if (held + room.weight <= room.limit) resolve('go');
      };
      const reread = (failed: (error: unknown) => void) => {
        if (pending) return;
        pending = [];
        readQueue(calls, ticket).then(
          (now) => {
            const late = pending ?? [];
            pending = undefined;
            if (now === 'gone') return resolve('gone');
            let ahead: Ahead[];
            try {
              ahead = aheadOf(room, ticket, now.kvs);
            } catch (error) {
              return reject(error);
            }
            if (blocker) {
              if (blockerOf(ahead)?.key !== blocker.key) resolve({ ahead, asOf: now.asOf });
              return;
            }
            asOf = now.asOf;
            left = new Map(ahead.map((a) => [a.key, a]));
            held = sum(ahead);
            if (held + room.weight <= room.limit) return resolve('go');
            for (const kv of late) count(kv);
          },
          (error: unknown) => {
            pending = undefined;
            failed(error);
          },
        );
      };
      const onDelete = (kv: IKeyValue) => {
        if (pending) pending.push(kv);
        else count(kv);
      };
      if (blocker) {
        watcher = calls.etcd.watch().key(blocker.key).watcher();
        watcher.on('connected', (response) => {
          if (BigInt(response.header.revision) > asOf) reread(reject);
        });
        watcher.on('delete', onDelete);
        // A broken or compacted watch ends the wait early; the caller re-reads and watches again.
        watcher.on('error', () => resolve('read'));
        watcher.on('end', () => resolve('read'));
      } else {
        const attached = watches.attach(room.prefix, asOf, { onDelete, onBroken: () => resolve('read') });
        detach = attached.detach;
        attached.covered.then((covered) => {
          if (!covered) reread(reject);
        });
      }
      timer = setInterval(() => reread(() => {}), recheckEveryMs(calls.callTimeoutMs));
    });
  } finally {
    clearInterval(timer);
    if (onAbort) stop.removeEventListener('abort', onAbort);
    detach?.();
    if (watcher) void watcher.cancel().catch(() => {});
  }
}
