import { EtcdClient } from '@fencekit/etcd';
import { nowNs } from '../history/clock.js';
import { sleep } from '../workloads/util.js';
import { aimedStart, type FaultWindowSummary, type NemesisContext, nemesisOp } from './context.js';
import type { ObservedPhase } from './observation.js';

/**
 * `delete-waiter-key`: a waiter's key deleted behind its live session, as etcd 3.4.3's lock lost a
 * waiter's key under Jepsen (the waiter then believed it was granted beside the true head). A separate
 * admin etcd client (not a client process's) watches the run's queues; once a queue holds a head and
 * at least two waiters (one, after half its wait), it deletes a waiter's key (`pickWaiter`; only the
 * key it listed: the delete compares the create revision, and a key gone meanwhile sends it to the next
 * queue it finds), leaving that waiter's lease alone. The waiter must notice its key is gone (it
 * re-checks its own key whenever it re-reads its place) and queue again; the waiter that was behind it
 * moves up. A waiter that does not notice takes the lock when the key ahead of it goes, together with
 * the one that is rightly next: two holders.
 *
 * The fault is instantaneous (nothing to heal): its start records the deleted key, its revision and
 * lease and the queue as it stood; the probe then reads back, with the same admin client, that the key
 * is gone (or was put back by a later join, with a newer revision) while its lease is still granted.
 */

/** One key of a queue as the admin client lists it. */
export interface QueuedKey {
  key: string;
  createRevision: bigint;
  lease: string;
}

/**
 * The victim: in the first queue (by key order) with a head and at least `waiters` waiters, a waiter:
 * the second one when the queue holds three waiters or more, else the first. Two waiters by default: the
 * one behind the victim is then the one a wrongly woken victim takes the lock beside; with one, it is
 * whoever asks next (the head that released asks again at once). The second waiter when there is one
 * behind it: the first may be being granted already (the head's release under way as the queue was
 * read), while the second still waits a whole section after the deletion.
 */
export function pickWaiter(
  keys: readonly QueuedKey[],
  waiters = 2,
): { victim: QueuedKey; queue: QueuedKey[] } | undefined {
  const queues = new Map<string, QueuedKey[]>();
  for (const k of keys) {
    // A waiter key is `<queue>/<lease hex>`: the queue is everything up to the last '/'.
    const queue = k.key.slice(0, k.key.lastIndexOf('/') + 1);
    let list = queues.get(queue);
    if (!list) {
      list = [];
      queues.set(queue, list);
    }
    list.push(k);
  }
  for (const name of [...queues.keys()].sort()) {
    const list = queues.get(name)!.sort((a, b) => (a.createRevision < b.createRevision ? -1 : 1));
    if (list.length >= 4) return { victim: list[2]!, queue: list };
    if (list.length >= 1 + waiters) return { victim: list[1]!, queue: list };
  }
  return undefined;
}

/** How often the admin client lists the queues while it waits for its moment. */
const POLL_MS = 20;

/** A request of the admin client, bounded: etcd3 gives a request no deadline of its own. */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const REQUEST_MS = 2_000;

export async function deleteWaiterKey(context: NemesisContext, waitMs: number): Promise<FaultWindowSummary> {
  const fault = 'delete-waiter-key';
  const namespace = context.namespace;
  if (namespace === undefined) {
    return { fault, target: {}, applied: false, error: 'the run has no key namespace' };
  }
  const admin = new EtcdClient({ hosts: [...context.deployment.endpoints], prefix: `${namespace}-admin` });
  const etcd = admin.etcd;
  const prefixes = [`${namespace}/locks/`, `${namespace}/elections/`];
  const list = async (): Promise<QueuedKey[]> => {
    const all: QueuedKey[] = [];
    for (const prefix of prefixes) {
      const response = await within(etcd.getAll().prefix(prefix).exec(), REQUEST_MS, 'list');
      for (const kv of response.kvs) {
        all.push({
          key: kv.key.toString('utf8'),
          createRevision: BigInt(kv.create_revision),
          lease: kv.lease,
        });
      }
    }
    return all;
  };
  try {
    let deletedAt = 0;
    const from = performance.now();
    const until = from + waitMs;
    /** A queue worth acting on: two waiters wanted; after half the wait (few clients queued at once), one. */
    const nextQueue = async () => {
      while (performance.now() < until && !context.signal.aborted) {
        const waiters = performance.now() - from < waitMs / 2 ? 2 : 1;
        const found = pickWaiter(await list().catch(() => []), waiters);
        if (found) return found;
        await sleep(POLL_MS, context.signal);
      }
      return undefined;
    };
    const started = await aimedStart(
      context,
      { fault },
      nextQueue,
      `no queue held a head and a waiter within ${waitMs} ms`,
      async (first) => {
        // The queue moves on between the listing and the delete (a grant, a waiter giving up): a delete
        // whose compare fails found the key gone, and the next queue is taken, within the wait.
        let found: typeof first | undefined = first;
        for (let tries = 1; found; tries++) {
          const { victim, queue } = found;
          const response = await within(
            etcd
              .if(victim.key, 'Create', '==', victim.createRevision.toString())
              .then(etcd.delete().key(victim.key))
              .commit(),
            REQUEST_MS,
            'delete',
          );
          if (response.succeeded) {
            deletedAt = nowNs();
            return {
              key: victim.key,
              createRevision: victim.createRevision.toString(),
              lease: victim.lease,
              head: queue[0]!.key,
              position: queue.indexOf(victim),
              queueLength: queue.length,
              deletedAtRevision: response.header.revision,
              tries,
            };
          }
          found = await nextQueue();
        }
        throw new Error(`every waiter key listed had gone before its delete, within ${waitMs} ms`);
      },
    );
    if (!started.ok) return { fault, target: {}, applied: false, error: started.error };
    const deleted = started.result;
    context.progress(`nemesis: ${fault}: deleted ${deleted.key} (queue of ${deleted.queueLength})`);
    const observed = await observeDeletion(etcd, deleted, context.startedAt).catch(
      (error: Error): ObservedPhase => ({
        seen: false,
        detail: `probe failed: ${error.message}`,
        atMs: Math.round(performance.now() - context.startedAt),
      }),
    );
    // Nothing to heal: the stop marks the end of the fault for the checkers, right after the probe.
    await nemesisOp(context, 'stop', { fault, key: deleted.key }, async () => ({
      afterMs: Math.round((nowNs() - deletedAt) / 1e6),
    }));
    return { fault, target: {}, applied: true, evidence: { ...deleted }, observed: { started: observed } };
  } finally {
    await within(admin.close(), REQUEST_MS * 2, 'close').catch(() => undefined);
  }
}

/**
 * The probe: the deleted key is absent, or present again only with a newer create revision (its owner
 * queued again), and its lease is still granted: a key gone behind a live session, not a session lost.
 */
async function observeDeletion(
  etcd: EtcdClient['etcd'],
  deleted: { key: string; createRevision: string; lease: string },
  startedAt: number,
): Promise<ObservedPhase> {
  const got = await within(etcd.get(deleted.key).exec(), REQUEST_MS, 'read back');
  const now = got.kvs[0];
  const keyGone = now === undefined || BigInt(now.create_revision) > BigInt(deleted.createRevision);
  const ttl = await within(
    etcd.leaseClient.leaseTimeToLive({ ID: deleted.lease }),
    REQUEST_MS,
    'lease time to live',
  );
  const leaseAlive = Number(ttl.TTL) > 0;
  const key = now === undefined ? 'absent' : `created again at revision ${now.create_revision}`;
  return {
    seen: keyGone && leaseAlive,
    detail: `key ${key}; its lease ${leaseAlive ? `alive (TTL ${ttl.TTL} s)` : 'gone'}`,
    atMs: Math.round(performance.now() - startedAt),
  };
}
