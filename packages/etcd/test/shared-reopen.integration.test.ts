import { EtcdSharedLockClient } from '@fencekit/etcd';
import { afterEach, describe, expect, it } from 'vitest';
import { runPrefix, sharedHosts } from './support/clients.js';

// A semaphore opened with another permit count than its holders and waiters use is refused with a
// typed error, as on ZooKeeper: every key of the permit queue carries the count in its value, so a
// caller queued behind a waiter of another count is refused as soon as it joins (before b445b9d it
// waited out its whole waitMs, and a try answered null).

const clients: EtcdSharedLockClient[] = [];
function client(): EtcdSharedLockClient {
  const c = new EtcdSharedLockClient({ hosts: sharedHosts(), prefix: runPrefix });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

const codeOf = (error: unknown) => (error as { code?: string }).code;

describe('etcd semaphore reopened with another permit count', () => {
  it('is refused while the queue holds a waiter of the other count', async () => {
    const [a, w, x] = [client(), client(), client()];
    const name = `reopen/${Math.random().toString(36).slice(2)}`;
    const held = await a.semaphore(name, { permits: 1 }).acquire({ ttlMs: 20_000 });
    const waiting = w.semaphore(name, { permits: 1 }).acquire({ ttlMs: 20_000, waitMs: 20_000 });
    // Wait until the waiter's key is queued behind the holder's.
    for (let i = 0; i < 100; i++) {
      const { kvs } = await a.etcd.kv.range({
        key: Buffer.from(`${runPrefix}/semaphores/${encodeURIComponent(name)}/permits/`),
        range_end: Buffer.from(`${runPrefix}/semaphores/${encodeURIComponent(name)}/permits0`),
        count_only: false,
      });
      if (kvs.length > 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const other = x.semaphore(name, { permits: 2 });
    const refused = await other.acquire({ permits: 1, ttlMs: 5_000, waitMs: 5_000 }).catch((e: unknown) => e);
    expect(codeOf(refused)).toBe('invalid-argument');
    expect((refused as Error).message).toMatch(/\b1\b/);
    const tried = await other.tryAcquire({ permits: 1, ttlMs: 5_000 }).catch((e: unknown) => e);
    expect(codeOf(tried)).toBe('invalid-argument');
    await held.release();
    await (await waiting).release();
  });
});
