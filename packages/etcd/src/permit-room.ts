import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '@fencekit/core';
import { CompareResult, CompareTarget, type IKeyValue, type ITxnResponse, type Watcher } from 'etcd3';
import { callOptions } from './connection.js';
import { toBackendError } from './errors.js';
import { prefixEnd } from './keys.js';
import { type EtcdCalls, SessionGoneError, type Ticket } from './queue.js';
import { recheckEveryMs } from './turn.js';
import type { Granted, QueueContext } from './wait.js';
import { withdrawInBackground } from './withdrawal.js';

/**
 * The permit engine behind the etcd semaphore and read-write lock (Curator's InterProcessSemaphoreV2,
 * in etcd terms). Waiters queue with the mutex's engine (`waitForHead`: revision-ordered keys, each
 * watching the key just ahead of it); the head then puts a lease key `<name>/leases/…` (value
 * `limit:weight`, attached to its session) and waits, watching the leases prefix (nobody else does),
 * until the lease keys ask for at most `limit`. Only the head puts lease keys, so their create
 * revisions follow grant order: that is the fence. A read-write lock is `MAX_PERMITS` units, of which a
 * reader takes 1 and a writer all.
 */
export interface RoomRequest {
  /** The leases prefix, ending in '/'. */
  readonly prefix: string;
  /** The semaphore or lock name, for errors. */
  readonly name: string;
  readonly limit: number;
  readonly weight: number;
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

function rangeOf(prefix: string) {
  return { request_range: { key: utf8(prefix), range_end: prefixEnd(prefix) } };
}

function leaseKeys(response: ITxnResponse, index: number): IKeyValue[] {
  return response.responses[index]?.response_range?.kvs ?? [];
}

/** `limit:weight` of each lease key; a value that does not parse counts as nothing. */
function parse(kv: IKeyValue): { limit: number; weight: number } | undefined {
  const match = /^(\d+):(\d+)$/.exec(kv.value.toString('utf8'));
  return match ? { limit: Number(match[1]), weight: Number(match[2]) } : undefined;
}

/**
 * Enters the room as the queue's head: resolves with the lease key's ticket once it fits, or null
 * (`wait` false) when it does not fit now. Throws `SessionGoneError` when the head's queue key or
 * lease key vanished (its session ended), `InvalidArgumentError` when the holders use another limit,
 * and `stop`'s reason when it aborts; the lease key is withdrawn whenever no ticket is returned.
 */
export async function enterRoom(
  context: QueueContext,
  head: Granted,
  room: RoomRequest,
  stop: AbortSignal,
  wait: boolean,
): Promise<Ticket | null> {
  const key = `${room.prefix}${head.session.idHex}-${randomUUID()}`;
  const value = `${room.limit}:${room.weight}`;
  let response: ITxnResponse;
  try {
    // Only while my queue key is still there (I am still the head, my session has not ended).
    response = await context.etcd.kv.txn(
      {
        compare: [
          {
            key: utf8(head.ticket.key),
            target: CompareTarget.Create,
            result: CompareResult.Equal,
            create_revision: head.ticket.revision.toString(),
          },
        ],
        success: [
          { request_put: { key: utf8(key), value: utf8(value), lease: head.session.id } },
          rangeOf(room.prefix),
        ],
        failure: [],
      },
      callOptions(context.callTimeoutMs),
    );
  } catch (error) {
    // The put may have happened: its key is withdrawn below only once a ticket names it, so delete by
    // name here (the key is unique to this attempt).
    void context.track(
      withdrawInBackground(
        () =>
          context.etcd
            .delete()
            .key(key)
            .exec()
            .then(() => undefined),
        head.session,
        context.closing,
      ),
    );
    throw toBackendError('entering the semaphore', error);
  }
  if (!response.succeeded) throw new SessionGoneError();
  const ticket: Ticket = { queue: room.prefix, key, revision: BigInt(response.header.revision), value };
  let kvs = leaseKeys(response, 1);
  let asOf = ticket.revision;
  try {
    for (;;) {
      let held = 0;
      for (const kv of kvs) {
        const lease = parse(kv);
        if (lease && lease.limit !== room.limit) {
          throw new InvalidArgumentError(
            'permits',
            room.limit,
            `${lease.limit}, the permit count the holders of "${room.name}" use`,
          );
        }
        held += lease?.weight ?? 0;
      }
      if (held <= room.limit) return ticket;
      if (!wait) {
        await withdrawLease(context, head, ticket);
        return null;
      }
      await untilDeleteUnder(context, room.prefix, asOf, stop);
      const now = await readRoom(context, ticket);
      kvs = now.kvs;
      asOf = now.asOf;
    }
  } catch (error) {
    await withdrawLease(context, head, ticket);
    throw error;
  }
}

/** My lease key (must still exist: else its session ended) and the room, as of one revision. */
async function readRoom(calls: EtcdCalls, ticket: Ticket): Promise<{ kvs: IKeyValue[]; asOf: bigint }> {
  let response: ITxnResponse;
  try {
    response = await calls.etcd.kv.txn(
      {
        compare: [],
        success: [{ request_range: { key: utf8(ticket.key), keys_only: true } }, rangeOf(ticket.queue)],
        failure: [],
      },
      callOptions(calls.callTimeoutMs),
    );
  } catch (error) {
    throw toBackendError('reading the semaphore', error);
  }
  const mine = leaseKeys(response, 0)[0];
  if (!mine || BigInt(mine.create_revision) !== ticket.revision) throw new SessionGoneError();
  return { kvs: leaseKeys(response, 1), asOf: BigInt(response.header.revision) };
}

/**
 * Deletes a lease key that was not granted, before the caller returns (so that nobody's next attempt
 * finds it still counted); without an answer, it retries in the background until its session ends.
 */
async function withdrawLease(context: QueueContext, head: Granted, ticket: Ticket): Promise<void> {
  const once = () =>
    context.etcd.kv
      .txn(
        {
          compare: [
            {
              key: utf8(ticket.key),
              target: CompareTarget.Create,
              result: CompareResult.Equal,
              create_revision: ticket.revision.toString(),
            },
          ],
          success: [{ request_delete_range: { key: utf8(ticket.key) } }],
          failure: [],
        },
        callOptions(context.callTimeoutMs),
      )
      .then(() => undefined);
  if (context.closing.aborted) return; // close() revokes the session, and the key with it
  const answered = await once().then(
    () => true,
    () => false,
  );
  if (!answered) void context.track(withdrawInBackground(once, head.session, context.closing));
}

/**
 * Waits for a delete under `prefix` after revision `asOf`, or a periodic re-check (a watch through a
 * silent member hears nothing, as `awaitTurn` explains), or `stop`.
 */
async function untilDeleteUnder(
  calls: EtcdCalls,
  prefix: string,
  asOf: bigint,
  stop: AbortSignal,
): Promise<void> {
  stop.throwIfAborted();
  let watcher: Watcher | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onAbort = () => reject(stop.reason);
      stop.addEventListener('abort', onAbort, { once: true });
      watcher = calls.etcd
        .watch()
        .prefix(prefix)
        .startRevision((asOf + 1n).toString())
        .watcher();
      watcher.on('delete', () => resolve());
      watcher.on('error', () => resolve());
      watcher.on('end', () => resolve());
      timer = setTimeout(resolve, recheckEveryMs(calls.callTimeoutMs));
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) stop.removeEventListener('abort', onAbort);
    if (watcher) void watcher.cancel().catch(() => {});
  }
}
