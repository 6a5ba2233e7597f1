import { type Cluster, startCluster } from '@fencekit/cluster';
import { monotonicNow } from '@fencekit/core';
import { EtcdClient } from '@fencekit/etcd';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * A lease that ends on its clock while its session has not ended yet: the event loop stalled past the
 * session's validity, the lease's `held` was read first, and the session's expiry timer has not run when
 * a keep-alive answered later renews the session. The ended lease's key must not stay on that session
 * (#13 bug 1): its withdrawal may not wait for a session that is still alive by the clock, only for one
 * that has ended. The stall is played by moving the clock the lease and session read (performance.now)
 * past their validity for the reading alone; real time, timers and keep-alives go on as they were.
 */
const prefix = `fk-late-renewal-${process.pid}`;
let cluster: Cluster;
const clients: EtcdClient[] = [];

function client(): EtcdClient {
  const c = new EtcdClient({ hosts: [...cluster.endpoints], prefix });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  cluster = await startCluster({ topology: 'etcd', nodes: 3, proxy: true });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await cluster?.close();
});

describe('etcd: a lease that ends past its session’s validity before the session does', () => {
  it('withdraws its key while the session lives on: the next waiter is granted', async () => {
    const holder = client();
    const other = client();
    const lease = await holder.acquire('late-renewal', { ttlMs: 2_000 });
    const waiting = other.acquire('late-renewal', { ttlMs: 2_000, waitMs: 6_000 });
    const granted = waiting.then(
      (next) => ({ next, at: monotonicNow() }),
      (error: unknown) => ({ error }),
    );
    // The stall, seen by the one reading that ends the lease: past the lease's and the session's validity.
    const real = performance.now.bind(performance);
    const ahead = lease.validUntil - real() + 50;
    vi.spyOn(performance, 'now').mockImplementation(() => real() + ahead);
    const ended = monotonicNow();
    expect(lease.held).toBe(false);
    vi.restoreAllMocks();
    // Real time again: the session was never ended, its keep-alives renew it, and its key must go all
    // the same. The waiter is granted within the withdrawal's first tries, not never (the session lives
    // as long as the holder's client does).
    const outcome = await granted;
    expect('error' in outcome ? outcome.error : undefined).toBeUndefined();
    if ('next' in outcome) {
      expect(outcome.next.held).toBe(true);
      // From the reading that ended the lease (on the moved clock, so the real gap is shorter still).
      expect(outcome.at - (ended - ahead)).toBeLessThan(3_000);
    }
  });

  it('a waiter that gives up past its session’s validity withdraws its key all the same: the next waiter is granted', async () => {
    const holder = client();
    const quitter = client();
    const next = client();
    const lease = await holder.acquire('late-quit', { ttlMs: 2_000 });
    const controller = new AbortController();
    const quitting = quitter
      .acquire('late-quit', { ttlMs: 2_000, waitMs: 20_000, signal: controller.signal })
      .then(
        () => 'granted',
        () => 'gave up',
      );
    // Queued behind the holder (its key exists) before it gives up.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const waiting = next.acquire('late-quit', { ttlMs: 2_000, waitMs: 6_000 }).then(
      (granted) => ({ granted, at: monotonicNow() }),
      (error: unknown) => ({ error }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The quitter gives up during a stall that carried it past its session's validity, seen by the
    // readings made while the abort is handled (microtasks only: no timer or keep-alive runs meanwhile).
    const real = performance.now.bind(performance);
    vi.spyOn(performance, 'now').mockImplementation(() => real() + 5_000);
    controller.abort(new Error('the caller gave up'));
    for (let i = 0; i < 200; i++) await Promise.resolve();
    vi.restoreAllMocks();
    expect(await quitting).toBe('gave up');
    const released = monotonicNow();
    await lease.release();
    const outcome = await waiting;
    expect('error' in outcome ? outcome.error : undefined).toBeUndefined();
    if ('granted' in outcome) {
      expect(outcome.granted.held).toBe(true);
      expect(outcome.at - released).toBeLessThan(3_000);
    }
  });
});
