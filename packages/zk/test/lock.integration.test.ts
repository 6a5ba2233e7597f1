import { injectCluster } from '@fencekit/cluster/vitest';
import { isFencekitError } from '@fencekit/core';
import { GuardedWriteRefusedError, ZkLockClient } from '@fencekit/zk';
import { afterEach, describe, expect, it } from 'vitest';
import { ZkCallError, ZkCode } from '../src/zk-errors.js';
import { followerLagMs } from './support/ensemble.js';
import { watchesByPath } from './support/four-letter.js';

const cluster = injectCluster('zookeeper');
const servers = cluster.endpoints.join(',');
const sessionTimeoutMs = 4_000;

const clients: ZkLockClient[] = [];
function client(options: { servers?: string } = {}): ZkLockClient {
  const c = new ZkLockClient({ servers: options.servers ?? servers, sessionTimeoutMs, followerLagMs });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

function unique(label: string): string {
  return `${label}/${Math.random().toString(36).slice(2)}`;
}

async function children(c: ZkLockClient, resource: string): Promise<string[]> {
  return (await c.session.children(c.folderOf(resource))).children;
}

describe('ZkLockClient on a real ensemble', () => {
  it('guarded write: applied while the lock is held, refused by ZooKeeper once it is not', async () => {
    const [a, b] = [client(), client()];
    const resource = unique('guarded');
    const path = `/fencekit-test/${unique('stock').replace('/', '-')}`;
    await a.session.mkdirp(path);

    const first = await a.acquire(resource, { ttlMs: 10_000 });
    await a.guardedWrite(first, path, Buffer.from('41'));
    await first.release();
    const second = await b.acquire(resource, { ttlMs: 10_000 });

    // The old holder writes anyway: ZooKeeper itself refuses, and the value stays the new holder's.
    await b.guardedWrite(second, path, Buffer.from('40'));
    const refused = await a.guardedWrite(first, path, Buffer.from('39')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GuardedWriteRefusedError);
    expect(isFencekitError(refused, 'stale-fence')).toBe(true);
    expect((refused as GuardedWriteRefusedError).lockNode).toBe(first.node);
    expect((await b.session.getData(path)).data?.toString()).toBe('40');
    await second.release();
  });

  it('guarded write: a missing target is a typed argument error, not a refusal', async () => {
    const a = client();
    const lease = await a.acquire(unique('missing-target'), { ttlMs: 10_000 });
    const error = await a
      .guardedWrite(lease, '/fencekit-test/does-not-exist', Buffer.from('x'))
      .catch((e) => e);
    expect(isFencekitError(error, 'invalid-argument')).toBe(true);
    expect(lease.held).toBe(true);
    await lease.release();
  });

  it('each waiter watches only its predecessor: one watch per queued node, none on the folder', async () => {
    // Pin every client to one server so its `wchp` sees all the watches.
    const endpoint = cluster.nodes[0]!.directEndpoint;
    const holder = client({ servers: endpoint });
    const resource = unique('herd');
    const lease = await holder.acquire(resource, { ttlMs: 20_000 });
    const waiters = Array.from({ length: 5 }, () => client({ servers: endpoint }));
    const pending = waiters.map((w) => w.acquire(resource, { ttlMs: 20_000, waitMs: 20_000 }));
    const folder = holder.folderOf(resource);
    let watched = new Map<string, number>();
    for (let i = 0; i < 50; i++) {
      watched = await watchesByPath(endpoint);
      if ([...watched.keys()].filter((p) => p.startsWith(`${folder}/`)).length === 5) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const queue = (await children(holder, resource)).sort(
      (x, y) => Number(x.slice(-10)) - Number(y.slice(-10)),
    );
    expect(queue).toHaveLength(6);
    // Every node but the last is watched by exactly one session (its successor); nobody watches the folder.
    for (const [index, name] of queue.entries()) {
      expect(watched.get(`${folder}/${name}`) ?? 0, name).toBe(index < queue.length - 1 ? 1 : 0);
    }
    expect(watched.get(folder) ?? 0).toBe(0);

    await lease.release();
    // Each waiter releases as soon as it is granted, so the queue drains in its own order.
    const fences = await Promise.all(
      pending.map(async (p) => {
        const granted = await p;
        await granted.release();
        return granted.fence;
      }),
    );
    expect(new Set(fences).size).toBe(5);
  });

  it('abandoned waiters (timeout, abort) delete their nodes', async () => {
    const [holder, timedOut, aborted] = [client(), client(), client()];
    const resource = unique('abandon');
    const lease = await holder.acquire(resource, { ttlMs: 20_000 });
    const controller = new AbortController();
    const a = timedOut.acquire(resource, { ttlMs: 5_000, waitMs: 300 }).catch((e: unknown) => e);
    const b = aborted.acquire(resource, { ttlMs: 5_000, signal: controller.signal }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 150));
    expect(await children(holder, resource)).toHaveLength(3);
    controller.abort();
    expect(isFencekitError(await a, 'timeout')).toBe(true);
    expect(isFencekitError(await b, 'aborted')).toBe(true);
    let left: string[] = [];
    for (let i = 0; i < 20; i++) {
      left = await children(holder, resource);
      if (left.length === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(left).toEqual([lease.node.split('/').at(-1)]);
    await lease.release();
  });

  it('extend checks the node and moves validity; a lease left to lapse gives its node up', async () => {
    const [a, b] = [client(), client()];
    const resource = unique('lapse');
    const lease = await a.acquire(resource, { ttlMs: 300 });
    const before = lease.validUntil;
    await lease.extend(300);
    expect(lease.validUntil).toBeGreaterThan(before);
    const next = await b.acquire(resource, { ttlMs: 5_000, waitMs: 5_000 });
    expect(lease.held).toBe(false);
    expect(next.fence).toBeGreaterThan(lease.fence);
    await next.release();
  });

  it('a create whose reply is lost is found again by its protected name: no duplicate node', async () => {
    const a = client();
    const resource = unique('lost-reply');
    await a.acquire(resource, { ttlMs: 5_000 }).then((l) => l.release()); // the folder exists now
    // The create reaches ZooKeeper and is applied; only its reply is "lost" on the way back.
    const realCreate = a.session.createWithStat.bind(a.session);
    let lost = 0;
    a.session.createWithStat = async (...args) => {
      await realCreate(...args);
      if (lost++ === 0)
        throw new ZkCallError('create', args[0], ZkCode.CONNECTION_LOSS, 'reply lost (injected)');
      return realCreate(...args);
    };
    const lease = await a.acquire(resource, { ttlMs: 5_000 });
    expect(lost).toBe(1);
    expect(await children(a, resource)).toEqual([lease.node.split('/').at(-1)]);
    await lease.release();
    expect(await children(a, resource)).toEqual([]);
  });

  it('resource names with slashes, dots and unicode map to one folder each', async () => {
    const a = client();
    for (const resource of ['a/b', 'a%2Fb', '.', '..', 'ünï/cödé']) {
      const lease = await a.acquire(resource, { ttlMs: 5_000 });
      expect(lease.node.startsWith(`${a.folderOf(resource)}/`)).toBe(true);
      await lease.release();
    }
    expect(new Set(['a/b', 'a%2Fb'].map((r) => a.folderOf(r))).size).toBe(2);
  });
});
