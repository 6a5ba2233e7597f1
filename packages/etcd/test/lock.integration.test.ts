import { isFencekitError } from '@fencekit/core';
import { EtcdClient, guardedPut } from '@fencekit/etcd';
import { afterEach, describe, expect, it } from 'vitest';
import { sharedHosts } from './support/clients.js';

const hosts = sharedHosts();
const clients: EtcdClient[] = [];
function client(): EtcdClient {
  const c = new EtcdClient({ hosts, prefix: `t${process.pid}` });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('etcd lock', () => {
  it('grants, fences with the create revision and releases', async () => {
    const a = client();
    const lease = await a.acquire('r1', { ttlMs: 2000 });
    expect(typeof lease.fence).toBe('bigint');
    expect(lease.held).toBe(true);
    expect(await client().tryAcquire('r1', { ttlMs: 2000 })).toBeNull();
    await lease.release();
    const next = await client().acquire('r1', { ttlMs: 2000 });
    expect(next.fence).toBeGreaterThan(lease.fence);
    await next.release();
  });

  it('hands over to waiters in arrival order', async () => {
    const holder = await client().acquire('fifo', { ttlMs: 2000 });
    const order: number[] = [];
    const waiters = [0, 1, 2].map(async (i) => {
      await new Promise((r) => setTimeout(r, 100 * i));
      const lease = await client().acquire('fifo', { ttlMs: 2000, waitMs: 10_000 });
      order.push(i);
      await lease.release();
    });
    await new Promise((r) => setTimeout(r, 500));
    await holder.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2]);
  });

  it('times out and leaves nothing queued', async () => {
    const a = client();
    const lease = await a.acquire('to', { ttlMs: 2000 });
    await expect(client().acquire('to', { ttlMs: 2000, waitMs: 200 })).rejects.toSatisfy((e) =>
      isFencekitError(e, 'timeout'),
    );
    const keys = await a.etcd.getAll().prefix(`t${process.pid}/locks/to/`).keys();
    expect(keys).toHaveLength(1);
    await lease.release();
  });

  it('a guarded write is refused once the lease is released', async () => {
    const a = client();
    const lease = await a.acquire('g', { ttlMs: 2000 });
    await guardedPut(lease, `t${process.pid}/data/g`, 'one');
    await lease.release();
    const other = await client().acquire('g', { ttlMs: 2000 });
    await expect(guardedPut(lease, `t${process.pid}/data/g`, 'stale')).rejects.toSatisfy((e) =>
      isFencekitError(e, 'stale-fence'),
    );
    expect(await a.etcd.get(`t${process.pid}/data/g`).string()).toBe('one');
    await other.release();
  });
});
