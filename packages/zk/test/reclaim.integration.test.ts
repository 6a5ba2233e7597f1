import type { Cluster } from '@fencekit/cluster';
import { ClientClosedError, isFencekitError, LockLostError, NotLockHolderError } from '@fencekit/core';
import { UNSURE, type ZkLease, ZkLockClient } from '@fencekit/zk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followerLagMs, startEnsemble } from './support/ensemble.js';

/**
 * Room for the cut to be noticed (⅔ of it), healed and reconnected before the ensemble could expire
 * the session (it expires after the whole timeout without hearing from the client).
 */
const sessionTimeoutMs = 8_000;

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startEnsemble({ topology: 'zookeeper', nodes: 3, proxy: true });
}, 120_000);
afterAll(async () => {
  await cluster?.close();
});

const open: { close(): Promise<void> }[] = [];
function track<T extends { close(): Promise<void> }>(thing: T): T {
  open.push(thing);
  return thing;
}

function unique(label: string): string {
  return `reclaim/${label}/${Math.random().toString(36).slice(2)}`;
}

function aborted(signal: AbortSignal, withinMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => reject(new Error(`not aborted within ${withinMs} ms`)), withinMs);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Holder A (on node 0 only) holds one lease per resource, waiter B (on the other nodes) waits for
 * each; A's connection is cut until its leases end unsure, then healed, and A reclaims every one.
 */
async function reclaimedAfterSuspension(resources: string[]) {
  const [first, ...rest] = cluster.nodes;
  const a = track(new ZkLockClient({ servers: first!.endpoint, sessionTimeoutMs, followerLagMs }));
  const b = track(
    new ZkLockClient({ servers: rest.map((n) => n.endpoint).join(','), sessionTimeoutMs, followerLagMs }),
  );
  const old: ZkLease[] = [];
  for (const resource of resources) old.push(await a.acquire(resource, { ttlMs: 60_000 }));
  const granted = new Set<string>();
  const waiting = resources.map((resource) => {
    const w = b.acquire(resource, { ttlMs: 60_000, waitMs: 60_000 }).then((lease) => {
      granted.add(resource);
      return lease;
    });
    w.catch(() => {});
    return w;
  });
  await new Promise((r) => setTimeout(r, 300));
  await cluster.faults.cutClients(first!.id);
  try {
    for (const lease of old) await aborted(lease.signal, sessionTimeoutMs);
  } finally {
    await cluster.faults.heal();
  }
  for (const lease of old) expect((lease.signal.reason as LockLostError).reason).toBe(UNSURE);
  const reclaimed: ZkLease[] = [];
  for (const lease of old) reclaimed.push(await a.reclaim(lease, { ttlMs: 60_000, waitMs: 10_000 }));
  return { a, b, old, reclaimed, waiting, granted };
}

describe('reclaim after a suspension', () => {
  it('the old lease can no longer touch the node: release() throws NotLockHolderError, `await using` leaves it', async () => {
    const resources = [unique('release'), unique('dispose')];
    const { a, old, reclaimed, waiting, granted } = await reclaimedAfterSuspension(resources);
    const [oldReleased, oldDisposed] = old as [ZkLease, ZkLease];
    const [newReleased, newDisposed] = reclaimed as [ZkLease, ZkLease];
    expect(newReleased.node).toBe(oldReleased.node);
    expect(newReleased.fence).toBe(oldReleased.fence);

    const refused = await oldReleased.release().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotLockHolderError);
    expect(isFencekitError(refused, 'not-holder')).toBe(true);
    {
      await using _ = oldDisposed;
    }
    // Let a wrongful delete reach the ensemble and its waiter before looking.
    await new Promise((r) => setTimeout(r, 1_000));
    for (const lease of reclaimed) {
      expect(lease.held).toBe(true);
      expect(await a.session.exists(lease.node)).not.toBeNull();
    }
    expect([...granted]).toEqual([]);

    // The reclaimed leases still hand over as usual.
    await newReleased.release();
    await newDisposed.release();
    for (const w of waiting) await (await w).release();
  }, 120_000);

  it('a reclaim racing the expiry of its session fails with LockLostError and hands nothing out', async () => {
    const [first, ...rest] = cluster.nodes;
    const a = track(new ZkLockClient({ servers: first!.endpoint, sessionTimeoutMs, followerLagMs }));
    const b = track(
      new ZkLockClient({ servers: rest.map((n) => n.endpoint).join(','), sessionTimeoutMs, followerLagMs }),
    );
    const resource = unique('expiry');
    const lease = await a.acquire(resource, { ttlMs: 60_000 });
    const waiting = b.acquire(resource, { ttlMs: 60_000, waitMs: 60_000 });
    waiting.catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    await cluster.faults.cutClients(first!.id);
    let next: ZkLease;
    let reclaiming: Promise<unknown>;
    try {
      await aborted(lease.signal, sessionTimeoutMs);
      // Started while the holder is cut off: it waits for the session, which expires meanwhile.
      reclaiming = a.reclaim(lease, { ttlMs: 60_000, waitMs: 30_000 }).catch((e: unknown) => e);
      next = await waiting;
    } finally {
      await cluster.faults.heal();
    }
    const outcome = await reclaiming;
    expect(outcome).toBeInstanceOf(LockLostError);
    expect(next.held).toBe(true);
    expect(await b.session.exists(next.node)).not.toBeNull();
    // The old lease went to reclaim: it cannot touch anything, and someone else holds the lock anyway.
    await expect(lease.release()).rejects.toBeInstanceOf(NotLockHolderError);
    expect(next.held).toBe(true);
    await next.release();
  }, 120_000);

  it('close() during a reclaim ends it at once with ClientClosedError', async () => {
    const [first] = cluster.nodes;
    const a = track(new ZkLockClient({ servers: first!.endpoint, sessionTimeoutMs, followerLagMs }));
    const lease = await a.acquire(unique('close'), { ttlMs: 60_000 });
    await cluster.faults.cutClients(first!.id);
    try {
      await aborted(lease.signal, sessionTimeoutMs);
      // Waits for the session, which cannot answer while cut off.
      const reclaiming = a.reclaim(lease, { ttlMs: 60_000, waitMs: 30_000 }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 200));
      const closing = a.close();
      const outcome = await Promise.race([
        reclaiming,
        new Promise((r) => setTimeout(() => r('still pending 2 s after close()'), 2_000)),
      ]);
      expect(outcome).toBeInstanceOf(ClientClosedError);
      await closing;
    } finally {
      await cluster.faults.heal();
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(open.splice(0).map((t) => t.close()));
  });
});
