import { injectCluster } from '@fencekit/cluster/vitest';
import { ZkSharedLockClient } from '@fencekit/zk';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRaw, connectRaw, settle } from '../bench/raw.js';
import { segmentFor } from '../src/paths.js';
import { followerLagMs } from './support/ensemble.js';

const { endpoints } = injectCluster('zookeeper');
const servers = endpoints.join(',');
const sessionTimeoutMs = 4_000;
const long = { ttlMs: 30_000, waitMs: 20_000 };

const clients: ZkSharedLockClient[] = [];
function client(): ZkSharedLockClient {
  const c = new ZkSharedLockClient({ servers, sessionTimeoutMs, followerLagMs });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

async function slotCount(name: string): Promise<number> {
  const admin = await connectRaw(servers, 10_000);
  try {
    const folder = `/fencekit/semaphores/${segmentFor(name)}/slots`;
    return (await settle<string[]>((done) => admin.getChildren(folder, undefined, done))).length;
  } catch {
    return 0;
  } finally {
    await closeRaw(admin);
  }
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within 5 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Counts the writes and node reads a client's session sends (and passes every call through). */
function countCalls(c: ZkSharedLockClient) {
  const counts = { creates: 0, removes: 0, reads: 0 };
  const session = c.session;
  const create = session.createWithStat.bind(session);
  const remove = session.remove.bind(session);
  const getData = session.getData.bind(session);
  session.createWithStat = (...args) => {
    counts.creates++;
    return create(...args);
  };
  session.remove = (...args) => {
    counts.removes++;
    return remove(...args);
  };
  session.getData = (...args) => {
    counts.reads++;
    return getData(...args);
  };
  return counts;
}

describe('what a semaphore grant costs the waiter (issue #19)', () => {
  it('a waiter let in after the queue ahead drained wrote only its join and read only the entry it watched', async () => {
    const name = `grant-cost/${Math.random().toString(36).slice(2)}`;
    const holder = await client().semaphore(name, { permits: 1 }).acquire(long);
    // Five waiters ahead, queued one at a time; each gives its permit back as soon as it has it.
    const ahead: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      ahead.push(
        client()
          .semaphore(name, { permits: 1 })
          .acquire(long)
          .then((lease) => lease.release()),
      );
      await eventually(async () => (await slotCount(name)) === i + 2, 'queued');
    }
    const last = client();
    const counts = countCalls(last);
    const waiting = last.semaphore(name, { permits: 1 }).acquire(long);
    await eventually(async () => (await slotCount(name)) === 7, 'the last waiter queued');
    await holder.release();
    await Promise.all(ahead);
    const lease = await waiting;
    // One create (its own entry) and no delete until its release: nothing is written at the grant
    // (before #19: a queue node and a lease node created, the queue node deleted). One data watch, on
    // the entry just before it: the entries before that one left unseen, and a woken waiter lists
    // the folder once rather than probe them one by one (the first slots version read each: 6 reads).
    expect(counts).toEqual({ creates: 1, removes: 0, reads: 1 });
    await lease.release();
    expect(await slotCount(name)).toBe(0);
  });
});
