import { type Cluster, startCluster } from '@fencekit/cluster';
import { EtcdClient, guardedPut } from '@fencekit/etcd';
import { Etcd3, type IKeyValue } from 'etcd3';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * A request the network held and delivers late — after `etcd3` retried it on another member and the
 * retry was answered — reaches etcd as an exact copy. These tests record the Txns fencekit sends
 * (a wrapper around the client's own `kv.txn`; every request still goes to a real etcd) and send a
 * recorded one again later, from another connection, as the network would deliver the held first try.
 */
const prefix = `fk-late-copy-${process.pid}`;
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ topology: 'etcd', nodes: 1 });
}, 60_000);
afterAll(async () => {
  await cluster?.close();
});

type TxnRequest = Parameters<Etcd3['kv']['txn']>[0];

/** An etcd3 client whose Txn requests are kept, in order, to be sent again. */
function recordingClient(): { etcd: Etcd3; sent: TxnRequest[] } {
  const etcd = new Etcd3({ hosts: [...cluster.endpoints].map((h) => `http://${h}`) });
  const sent: TxnRequest[] = [];
  const txn = etcd.kv.txn.bind(etcd.kv);
  etcd.kv.txn = (request, options) => {
    sent.push(request);
    return txn(request, options);
  };
  return { etcd, sent };
}

it('a late copy of an earlier guarded write does not overwrite a newer acknowledged one', async () => {
  const { etcd, sent } = recordingClient();
  const replay = new Etcd3({ hosts: [...cluster.endpoints].map((h) => `http://${h}`) });
  const client = new EtcdClient({ client: etcd, prefix });
  const key = `${prefix}/data/late-write`;
  try {
    const lease = await client.acquire('late-write', { ttlMs: 10_000 });
    const before = sent.length;
    await guardedPut(lease, key, 'first');
    const first = sent.slice(before);
    await guardedPut(lease, key, 'second');
    await guardedPut(lease, key, 'third');
    // The held copies of the first write arrive now, while the lease still holds.
    for (const copy of first) await replay.kv.txn(copy);
    expect(await replay.get(key).string()).toBe('third');
    // And the holding's next write is still accepted.
    await guardedPut(lease, key, 'fourth');
    expect(await replay.get(key).string()).toBe('fourth');
    await lease.release();
  } finally {
    await client.close();
    etcd.close();
    replay.close();
  }
});

it('a guarded write over a key another holder wrote, or someone changed meanwhile, still lands', async () => {
  const a = new EtcdClient({ hosts: [...cluster.endpoints], prefix });
  const other = new Etcd3({ hosts: [...cluster.endpoints].map((h) => `http://${h}`) });
  const key = `${prefix}/data/shared`;
  try {
    const first = await a.acquire('shared', { ttlMs: 10_000 });
    await guardedPut(first, key, 'one');
    await first.release();
    await other.put(key).value('meanwhile');
    const second = await a.acquire('shared', { ttlMs: 10_000 });
    await guardedPut(second, key, 'two');
    expect(await other.get(key).string()).toBe('two');
    await other.put(key).value('changed behind the holder');
    await guardedPut(second, key, 'three');
    const kv: IKeyValue | undefined = (await other.get(key).exec()).kvs[0];
    expect(kv?.value.toString()).toBe('three');
    await second.release();
  } finally {
    await a.close();
    other.close();
  }
});

it('a late copy of a join does not put the waiter key back after its lease was released', async () => {
  const { etcd, sent } = recordingClient();
  const replay = new Etcd3({ hosts: [...cluster.endpoints].map((h) => `http://${h}`) });
  const client = new EtcdClient({ client: etcd, prefix });
  const other = new EtcdClient({ hosts: [...cluster.endpoints], prefix });
  const queue = `${prefix}/locks/late-join/`;
  try {
    // A warm session, so the acquire below is one join Txn on a session that lives on.
    await (await client.acquire('warm', { ttlMs: 10_000 })).release();
    const before = sent.length;
    const lease = await client.acquire('late-join', { ttlMs: 10_000 });
    const joins = sent.slice(before);
    await lease.release();
    // The held copy of the join arrives now: the queue is empty, the session alive.
    for (const copy of joins) await replay.kv.txn(copy);
    expect(await replay.getAll().prefix(queue).keys()).toEqual([]);
    const next = await other.tryAcquire('late-join', { ttlMs: 10_000 });
    expect(next).not.toBeNull();
    await next?.release();
    // The same client still joins (its mark moved on with the answered join, not with the copy).
    await (await client.acquire('late-join', { ttlMs: 10_000, waitMs: 5_000 })).release();
  } finally {
    await Promise.all([client.close(), other.close()]);
    etcd.close();
    replay.close();
  }
});

it('a late copy of an earlier proclaim does not overwrite a newer one', async () => {
  const { etcd, sent } = recordingClient();
  const replay = new Etcd3({ hosts: [...cluster.endpoints].map((h) => `http://${h}`) });
  const client = new EtcdClient({ client: etcd, prefix });
  const observer = new EtcdClient({ hosts: [...cluster.endpoints], prefix });
  try {
    const leadership = await client.election('late-proclaim', { ttlMs: 10_000 }).campaign('a');
    const before = sent.length;
    await leadership.proclaim('first');
    const first = sent.slice(before);
    await leadership.proclaim('second');
    for (const copy of first) await replay.kv.txn(copy);
    const leader = await observer.election('late-proclaim', { ttlMs: 10_000 }).leader();
    expect(leader?.value).toBe('second');
    await leadership.proclaim('third');
    expect((await observer.election('late-proclaim', { ttlMs: 10_000 }).leader())?.value).toBe('third');
    await leadership.resign();
  } finally {
    await Promise.all([client.close(), observer.close()]);
    etcd.close();
    replay.close();
  }
});

it("a late copy of an unanswered join's clean-up does not take the key of a later join", async () => {
  const { etcd, sent } = recordingClient();
  const replay = new Etcd3({ hosts: [...cluster.endpoints].map((h) => `http://${h}`) });
  const client = new EtcdClient({ client: etcd, prefix });
  const queue = `${prefix}/locks/late-clean-up/`;
  try {
    await (await client.acquire('warm-2', { ttlMs: 10_000 })).release();
    // The next Txn (the join) reaches etcd, but its answer is lost on the way back.
    const txn = etcd.kv.txn;
    let dropAnswer = true;
    etcd.kv.txn = async (request, options) => {
      const response = await txn(request, options);
      if (!dropAnswer) return response;
      dropAnswer = false;
      throw new Error('the answer was lost on the way back');
    };
    const deletes: Parameters<Etcd3['kv']['deleteRange']>[0][] = [];
    const deleteRange = etcd.kv.deleteRange.bind(etcd.kv);
    etcd.kv.deleteRange = (request, options) => {
      deletes.push(request);
      return deleteRange(request, options);
    };
    const before = sent.length;
    await expect(client.acquire('late-clean-up', { ttlMs: 10_000, waitMs: 2_000 })).rejects.toThrow();
    const cleanUp = sent.slice(before + 1);
    expect(await replay.getAll().prefix(queue).keys()).toEqual([]);
    // The same session joins the queue again and holds the lock.
    const lease = await client.acquire('late-clean-up', { ttlMs: 10_000, waitMs: 5_000 });
    // The held copies of the clean-up arrive now.
    for (const copy of cleanUp) await replay.kv.txn(copy);
    for (const copy of deletes) await replay.kv.deleteRange(copy);
    expect(await replay.getAll().prefix(queue).keys()).toEqual([lease.key]);
    await lease.release();
  } finally {
    await client.close();
    etcd.close();
    replay.close();
  }
});
