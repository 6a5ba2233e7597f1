import { BackendUnavailableError, IndeterminateError } from '@fencekit/core';
import {
  CompareResult,
  CompareTarget,
  type Etcd3,
  type IKeyValue,
  type IRequestOp,
  type ITxnResponse,
  SortOrder,
  SortTarget,
} from 'etcd3';
import { callOptions } from './connection.js';
import { isRefusal, toBackendError } from './errors.js';
import { prefixEnd, rangeEnd } from './keys.js';

/**
 * The one engine behind the lock and the election (Curator's "create sequential node, watch the
 * predecessor" recipe, in etcd terms): each waiter puts its own key, attached to its session lease,
 * under a queue prefix; the key with the lowest create revision is at the head; every other waiter
 * watches only the key just ahead of it, so a release wakes exactly one waiter (no herd).
 */

/** An etcd client and the deadline each of fencekit's requests to it gets (`callTimeoutMs`). */
export interface EtcdCalls {
  readonly etcd: Etcd3;
  readonly callTimeoutMs: number;
}

/** A waiter's place in a queue. `revision` is its key's create revision: the fence / term. */
export interface Ticket {
  readonly queue: string;
  readonly key: string;
  readonly revision: bigint;
  readonly value: string;
}

/** The answer to "where am I in the queue?" as of one etcd revision. */
export type Position =
  | { kind: 'head' }
  | { kind: 'behind'; predecessor: string; asOf: bigint }
  /** My key is gone: the lease expired (or someone deleted it). */
  | { kind: 'gone' };

/**
 * A join got no answer and its clean-up none either: the waiter key `key` may be in the queue (even
 * at its head), attached to a session that lives on. The caller must see it withdrawn.
 */
export class UnansweredJoin extends IndeterminateError {
  constructor(
    resource: string,
    readonly key: string,
    cause: unknown,
  ) {
    super(resource, 'acquire', { cause });
  }
}

export class SessionGoneError extends Error {
  constructor() {
    super('the waiter key vanished: its session lease expired');
  }
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

function rangeOp(key: string, extra: Record<string, unknown> = {}): IRequestOp {
  return { request_range: { key: utf8(key), ...extra } };
}

function prefixOp(queue: string, extra: Record<string, unknown>): IRequestOp {
  return { request_range: { key: utf8(queue), range_end: prefixEnd(queue), ...extra } };
}

/**
 * Keys of the queue, newest first: `limit: 2` after my put = me and the one right ahead of me. Names
 * and revisions only (`keys_only`): the waiters' values are never needed here.
 */
function newestOp(queue: string, limit: number, maxCreateRevision?: bigint): IRequestOp {
  return prefixOp(queue, {
    sort_target: SortTarget.Create,
    sort_order: SortOrder.Descend,
    limit,
    keys_only: true,
    ...(maxCreateRevision === undefined ? {} : { max_create_revision: maxCreateRevision.toString() }),
  });
}

/** The head of the queue: lowest create revision (its name and revisions only). */
export function headOp(queue: string): IRequestOp {
  return prefixOp(queue, {
    sort_target: SortTarget.Create,
    sort_order: SortOrder.Ascend,
    limit: 1,
    keys_only: true,
  });
}

function kvs(response: ITxnResponse, index: number): IKeyValue[] {
  return response.responses[index]?.response_range?.kvs ?? [];
}

export function decode(kv: IKeyValue): { key: string; revision: bigint; value: string } {
  return {
    key: kv.key.toString('utf8'),
    revision: BigInt(kv.create_revision),
    value: kv.value.toString('utf8'),
  };
}

/**
 * A session's join mark: a key attached to the session lease that every join of that session rewrites
 * in the same Txn, guarded by "its mod revision is still `revision`" (the one this client last saw).
 * `etcd3` retries a try that timed out on another member, and the held first try can still reach
 * etcd later — after its waiter was granted and released. Without the mark such a late copy found the
 * queue empty (or the waiter key absent) and put the key again: an orphan on a live session, holding
 * the lock for nobody. A copy finds the mark moved on by the join that was answered, and does nothing.
 * One mark per session (not per queue): two joins of one session at once cost the later one a retry.
 */
export interface JoinMark {
  readonly key: string;
  /** The mark's mod revision as of this client's last answered join (0: none yet, the key absent). */
  revision: bigint;
}

/** A join whose mark had moved (another join of this session, or a late one) is retried this often. */
const MAX_JOIN_TRIES = 3;

/**
 * Joins the queue in one round trip. An empty queue (no key under its prefix — a compare over the
 * whole range) means I am the head: put my key, nothing to read back. Otherwise, in the same Txn's
 * other branch: put my key if absent and read the two newest keys (me and my predecessor). A key
 * already present under my session (a retried request whose first answer was lost, or a leftover) is
 * deleted and the put retried, so each grant gets a fresh create revision and fences never repeat.
 * `read` replaces that read of the two newest keys (the permit queue reads the whole prefix); what it
 * returned is `seen` (undefined when the queue was empty and nothing was read).
 */
export async function join(
  calls: EtcdCalls,
  queue: string,
  key: string,
  leaseId: string,
  value: string,
  resource: string,
  mark: JoinMark,
  read: IRequestOp = newestOp(queue, 2),
): Promise<{ ticket: Ticket; position: Position; seen: IKeyValue[] | undefined }> {
  for (let attempt = 0, moved = 0; attempt < 3 && moved < MAX_JOIN_TRIES; attempt++) {
    let response: ITxnResponse;
    const keyBytes = utf8(key);
    const put: IRequestOp = { request_put: { key: keyBytes, value: utf8(value), lease: leaseId } };
    const options = callOptions(calls.callTimeoutMs);
    try {
      const marked = await calls.etcd.kv.txn(
        {
          compare: [
            {
              key: utf8(mark.key),
              target: CompareTarget.Mod,
              result: CompareResult.Equal,
              mod_revision: mark.revision.toString(),
            },
          ],
          success: [
            { request_put: { key: utf8(mark.key), value: utf8(''), lease: leaseId } },
            {
              request_txn: {
                compare: [
                  {
                    key: utf8(queue),
                    range_end: prefixEnd(queue),
                    target: CompareTarget.Create,
                    result: CompareResult.Equal,
                    create_revision: 0,
                  },
                ],
                success: [put],
                failure: [
                  {
                    request_txn: {
                      compare: [
                        {
                          key: keyBytes,
                          target: CompareTarget.Create,
                          result: CompareResult.Equal,
                          create_revision: 0,
                        },
                      ],
                      success: [put, read],
                      failure: [{ request_range: { key: keyBytes, keys_only: true } }],
                    },
                  },
                ],
              },
            },
          ],
          failure: [{ request_range: { key: utf8(mark.key), keys_only: true } }],
        },
        options,
      );
      if (!marked.succeeded) {
        // Another join of this session moved the mark (or one of mine landed late): take it as it is.
        const now = kvs(marked, 0)[0];
        mark.revision = now ? BigInt(now.mod_revision) : 0n;
        moved++;
        attempt--;
        continue;
      }
      // Every write of one Txn carries its revision: the mark's mod revision is now this.
      mark.revision = BigInt(marked.header.revision);
      const join = marked.responses[1]?.response_txn;
      if (!join) throw new Error('etcd answered a join Txn without its inner Txn');
      response = { ...join, header: marked.header };
    } catch (error) {
      if (isRefusal(error)) throw toBackendError('joining the queue', error);
      // The put may have happened: remove whatever my session left under this key, then say so. The
      // clean-up shares the join's deadline, so the two together stay within one `callTimeoutMs`.
      const cleaned = await clearUnansweredJoin(calls, key, mark, leaseId, options).then(
        () => true,
        () => false,
      );
      if (cleaned) throw toBackendError('joining the queue', error);
      throw new UnansweredJoin(resource, key, error);
    }
    const revision = BigInt(response.header.revision);
    const ticket: Ticket = { queue, key, revision, value };
    // The queue was empty and my put went in: head, with nothing read.
    if (response.succeeded) return { ticket, position: { kind: 'head' }, seen: undefined };
    const inner = response.responses[0]?.response_txn;
    if (!inner?.succeeded) {
      const stale = inner ? kvs(inner, 0)[0] : undefined;
      if (stale) await withdraw(calls, { queue, key, revision: BigInt(stale.create_revision), value });
      continue;
    }
    const seen = kvs(inner, 1);
    // With the default read: the newest key that is not mine is the one just ahead of me.
    const ahead = seen.find((kv) => kv.key.toString('utf8') !== key);
    if (!ahead) return { ticket, position: { kind: 'head' }, seen };
    return {
      ticket,
      position: { kind: 'behind', predecessor: ahead.key.toString('utf8'), asOf: revision },
      seen,
    };
  }
  throw new BackendUnavailableError(
    'etcd',
    `could not create a fresh waiter key ${key} (or its join mark kept moving)`,
  );
}

/**
 * Where the ticket stands now, read atomically with a check that its key still exists — etcd 3.4.3
 * as tested by Jepsen could grant a lock whose key had already expired; asking in the same
 * transaction closes that gap.
 */
export async function locate(calls: EtcdCalls, ticket: Ticket): Promise<Position> {
  let response: ITxnResponse;
  try {
    response = await calls.etcd.kv.txn(
      {
        compare: [],
        success: [rangeOp(ticket.key, { keys_only: true }), newestOp(ticket.queue, 1, ticket.revision - 1n)],
        failure: [],
      },
      callOptions(calls.callTimeoutMs),
    );
  } catch (error) {
    throw toBackendError('reading the queue', error);
  }
  const mine = kvs(response, 0)[0];
  if (!mine || BigInt(mine.create_revision) !== ticket.revision) return { kind: 'gone' };
  const ahead = kvs(response, 1)[0];
  if (!ahead) return { kind: 'head' };
  return { kind: 'behind', predecessor: ahead.key.toString('utf8'), asOf: BigInt(response.header.revision) };
}

/**
 * Release in one round trip: delete my key if it is still mine; otherwise report who heads the queue
 * now (`null` = nobody), so the caller can tell "expired, nobody else" from "someone else holds it".
 */
export async function leave(
  calls: EtcdCalls,
  ticket: Ticket,
): Promise<{ deleted: true } | { deleted: false; head: string | null }> {
  const response = await calls.etcd.kv.txn(
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
      failure: [headOp(ticket.queue)],
    },
    callOptions(calls.callTimeoutMs),
  );
  if (response.succeeded) return { deleted: true };
  const head = kvs(response, 0)[0];
  return { deleted: false, head: head ? head.key.toString('utf8') : null };
}

/** Deletes the ticket's key if it is still that ticket's (same create revision). */
export async function withdraw(calls: EtcdCalls, ticket: Ticket): Promise<boolean> {
  return (await leave(calls, ticket)).deleted;
}

/**
 * Takes out whatever a join that got no answer may have put, so that no copy of it or of this
 * clean-up can do harm later (only for a waiter's own key while its session is reserved for the
 * queue). First it moves the session's join mark: a copy of the unanswered join still in the network
 * then fails its compare, so no join of this key lands after that revision. Then it deletes the key
 * only if it was created up to that revision: a copy of this delete arriving after the session joined
 * the queue again leaves the new key (an unguarded delete would take a waiter's place, or a holder's
 * lock). Two requests, only on this rare path.
 */
export async function clearUnansweredJoin(
  calls: EtcdCalls,
  key: string,
  mark: JoinMark,
  leaseId: string,
  options = callOptions(calls.callTimeoutMs),
): Promise<void> {
  const moved = await calls.etcd.kv.txn(
    {
      compare: [],
      success: [{ request_put: { key: utf8(mark.key), value: utf8(''), lease: leaseId } }],
      failure: [],
    },
    options,
  );
  const upTo = BigInt(moved.header.revision);
  // Another join of this session may have moved it further meanwhile: never step back.
  if (upTo > mark.revision) mark.revision = upTo;
  await calls.etcd.kv.txn(
    {
      compare: [
        {
          key: utf8(key),
          target: CompareTarget.Create,
          result: CompareResult.Less,
          create_revision: (upTo + 1n).toString(),
        },
      ],
      success: [{ request_delete_range: { key: utf8(key) } }],
      failure: [],
    },
    options,
  );
}

/** Reads the head of a queue and the revision it was read at. */
export async function readHead(
  calls: EtcdCalls,
  queue: string,
): Promise<{ head: IKeyValue | undefined; revision: bigint }> {
  const response = await calls.etcd.kv.range(
    {
      key: utf8(queue),
      range_end: rangeEnd(utf8(queue)),
      sort_target: SortTarget.Create,
      sort_order: SortOrder.Ascend,
      limit: 1,
    },
    callOptions(calls.callTimeoutMs),
  );
  return { head: response.kvs[0], revision: BigInt(response.header.revision) };
}
