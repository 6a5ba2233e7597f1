import { type Cluster, startCluster } from '@fencekit/cluster';
import { isFencekitError, monotonicNow } from '@fencekit/core';
import { EtcdClient, type EtcdLease, guardedPut } from '@fencekit/etcd';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * How a lease ends, on a real 3-member etcd behind the fault proxy: whatever the way (a lapsed short
 * extend, a release or resign lost in a short outage), the key must go so the next waiter is granted
 * within the lease's own window plus a small bound; and every call is bounded by `callTimeoutMs`.
 */
const prefix = `fk-lease-end-${process.pid}`;
let cluster: Cluster;
const clients: EtcdClient[] = [];

function client(
  hosts: readonly string[],
  options: { callTimeoutMs?: number; keepAlive?: boolean } = {},
): EtcdClient {
  const c = new EtcdClient({ hosts: [...hosts], prefix, ...options });
  clients.push(c);
  return c;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A follower (not the raft leader) and the other members: killing a follower needs no election. */
async function pickFollower(): Promise<{ follower: string; others: string[] }> {
  const leader = await cluster.waitForLeader({ timeoutMs: 15_000 });
  const follower = cluster.nodes.find((n) => n.id !== leader);
  if (!follower) throw new Error('no follower');
  return {
    follower: follower.id,
    others: cluster.nodes.filter((n) => n.id !== follower.id).map((n) => n.id),
  };
}

const endpointOf = (id: string) => {
  const node = cluster.nodes.find((n) => n.id === id);
  if (!node) throw new Error(`no node ${id}`);
  return node.endpoint;
};

/** Whether `key` is in etcd now, read through `through` (a client on live members). */
async function exists(through: EtcdClient, key: string): Promise<boolean> {
  const { kvs } = await through.etcd.kv.range({ key: Buffer.from(key, 'utf8') });
  return kvs.length > 0;
}

/** Runs `action`, expecting it to fail; returns the error and how long it took (ms). */
async function failure(action: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = monotonicNow();
  try {
    await action();
  } catch (error) {
    return { error, ms: monotonicNow() - started };
  }
  throw new Error('expected a failure, but it succeeded');
}

beforeAll(async () => {
  cluster = await startCluster({ topology: 'etcd', nodes: 3, proxy: true });
});
afterEach(async () => {
  await cluster.faults.heal();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await cluster?.close();
});

describe('etcd: an ended lease never keeps its key (keepAlive: true)', () => {
  it('a short extend that lapses withdraws the key: the next waiter is granted right after the lease ends', async () => {
    const holder = client(cluster.endpoints);
    const other = client(cluster.endpoints);
    const lease = await holder.acquire('lapsed-extend', { ttlMs: 3_000 });
    const waiting = other.acquire('lapsed-extend', { ttlMs: 3_000, waitMs: 8_000 });
    const granted = waiting.then((next) => ({ next, at: monotonicNow() }));
    await delay(200);
    await lease.extend(100);
    const { next, at } = await granted;
    console.info(
      `[etcd lease-end] lapsed extend(100): next waiter granted ${(at - lease.validUntil).toFixed(0)} ms after the lease's validUntil`,
    );
    expect(at).toBeGreaterThanOrEqual(lease.validUntil);
    expect(at - lease.validUntil).toBeLessThan(1_500);
    expect(lease.held).toBe(false);
    expect(await exists(other, lease.key)).toBe(false);
    // The lapsed holder learns someone else holds it now; the new holder keeps it.
    await expect(lease.release()).rejects.toSatisfy((e) => isFencekitError(e, 'not-holder'));
    expect(next.held).toBe(true);
    await next.release();
  });

  it('a short extend is not undone by the session keep-alive: the lease ends at its own window', async () => {
    const holder = client(cluster.endpoints);
    // Keep-alive every 700 ms: several renewals fall inside the 1.5 s window below.
    const lease = await holder.acquire('short-extend-kept', { ttlMs: 2_100 });
    await lease.extend(1_500);
    const until = lease.validUntil;
    await delay(1_500 + 300);
    expect(lease.held).toBe(false);
    expect(lease.validUntil).toBe(until);
  });

  it('a release lost in a short outage (member killed, restarted within the TTL) is retried: the key goes and the next waiter is granted', async () => {
    const { follower, others } = await pickFollower();
    const holder = client([endpointOf(follower)], { callTimeoutMs: 1_000 });
    const other = client(others.map(endpointOf));
    const lease = await holder.acquire('release-outage', { ttlMs: 6_000 });
    const waiting = other.acquire('release-outage', { ttlMs: 6_000, waitMs: 15_000 });
    const granted = waiting.then((next) => ({ next, at: monotonicNow() }));
    await delay(200);

    await cluster.faults.kill(follower);
    const failed = await failure(() => lease.release());
    expect(isFencekitError(failed.error, 'backend-unavailable'), String(failed.error)).toBe(true);
    expect(lease.held).toBe(false);
    await cluster.faults.restart(follower);
    const restartedAt = monotonicNow();

    // The caller may retry the release; once it resolves the key is gone.
    let retried = false;
    for (let attempt = 0; attempt < 40 && !retried; attempt++) {
      retried = await lease.release().then(
        () => true,
        () => false,
      );
      if (!retried) await delay(250);
    }
    expect(retried, 'the retried release never succeeded').toBe(true);
    expect(await exists(other, lease.key)).toBe(false);

    const { next, at } = await granted;
    console.info(
      `[etcd lease-end] release lost in an outage: next waiter granted ${(at - restartedAt).toFixed(0)} ms after the member was back`,
    );
    expect(at - restartedAt).toBeLessThan(4_000);
    await next.release();
  });

  it('without a retry by the caller, the key of a failed release is withdrawn in the background', async () => {
    const { follower, others } = await pickFollower();
    const holder = client([endpointOf(follower)], { callTimeoutMs: 1_000 });
    const other = client(others.map(endpointOf));
    const lease = await holder.acquire('release-outage-bg', { ttlMs: 6_000 });
    const waiting = other.acquire('release-outage-bg', { ttlMs: 6_000, waitMs: 15_000 });
    const granted = waiting.then((next) => ({ next, at: monotonicNow() }));
    await delay(200);

    await cluster.faults.kill(follower);
    await failure(() => lease.release());
    await cluster.faults.restart(follower);
    const restartedAt = monotonicNow();
    const { next, at } = await granted;
    console.info(
      `[etcd lease-end] background withdrawal: next waiter granted ${(at - restartedAt).toFixed(0)} ms after the member was back`,
    );
    expect(at - restartedAt).toBeLessThan(4_000);
    await next.release();
  });

  it('a resign lost in a short outage is retried: the next candidate leads', async () => {
    const { follower, others } = await pickFollower();
    const first = client([endpointOf(follower)], { callTimeoutMs: 1_000 }).election('resign-outage', {
      ttlMs: 6_000,
    });
    const second = client(others.map(endpointOf)).election('resign-outage', { ttlMs: 6_000 });
    const leadership = await first.campaign('first');
    const next = second.campaign('second', { waitMs: 15_000 }).then((won) => ({ won, at: monotonicNow() }));
    await delay(200);

    await cluster.faults.kill(follower);
    const failed = await failure(() => leadership.resign());
    expect(isFencekitError(failed.error, 'backend-unavailable'), String(failed.error)).toBe(true);
    await cluster.faults.restart(follower);
    const restartedAt = monotonicNow();
    let retried = false;
    for (let attempt = 0; attempt < 40 && !retried; attempt++) {
      retried = await leadership.resign().then(
        () => true,
        () => false,
      );
      if (!retried) await delay(250);
    }
    expect(retried, 'the retried resign never succeeded').toBe(true);
    const { won, at } = await next;
    expect(at - restartedAt).toBeLessThan(4_000);
    expect((await second.leader())?.candidate).toBe('second');
    await won.resign();
  });
});

describe('etcd: an ended lease never keeps its key (keepAlive: false)', () => {
  it("a release lost in a short outage: the grant's own etcd lease is revoked once the member is back, not a TTL later", async () => {
    const { follower, others } = await pickFollower();
    const holder = client([endpointOf(follower)], { callTimeoutMs: 1_000, keepAlive: false });
    const other = client(others.map(endpointOf));
    // A 12 s lease and an outage longer than the revoke's own tries (4 × callTimeoutMs): without a
    // retried revoke the key would stay ~6 s past the member's return.
    const lease = await holder.acquire('per-grant-outage', { ttlMs: 12_000 });
    const waiting = other.acquire('per-grant-outage', { ttlMs: 12_000, waitMs: 20_000 });
    const granted = waiting.then((next) => ({ next, at: monotonicNow() }));
    await delay(200);

    await cluster.faults.kill(follower);
    await failure(() => lease.release());
    await delay(5_000);
    await cluster.faults.restart(follower);
    const restartedAt = monotonicNow();
    const { next, at } = await granted;
    console.info(
      `[etcd lease-end] keepAlive: false, release lost in an outage: next waiter granted ${(at - restartedAt).toFixed(0)} ms after the member was back`,
    );
    expect(at - restartedAt).toBeLessThan(3_000);
    await next.release();
  });
});

describe('etcd: a waiter that gives up never leaves its key behind', () => {
  it('a timed-out waiter whose withdrawal is lost in an outage: its key goes once etcd is back, and the next waiter is granted', async () => {
    const { follower, others } = await pickFollower();
    const holder = client(others.map(endpointOf));
    const quitter = client([endpointOf(follower)], { callTimeoutMs: 1_000 });
    const third = client(others.map(endpointOf));
    const lease = await holder.acquire('quitter', { ttlMs: 6_000 });
    const quitting = quitter.acquire('quitter', { ttlMs: 6_000, waitMs: 1_500 }).then(
      () => 'granted',
      (error: unknown) => error,
    );
    await delay(300);
    await cluster.faults.kill(follower);
    expect(isFencekitError(await quitting, 'timeout'), String(await quitting)).toBe(true);
    await cluster.faults.restart(follower);
    const waiting = third.acquire('quitter', { ttlMs: 6_000, waitMs: 10_000 });
    await delay(300);
    await lease.release();
    const releasedAt = monotonicNow();
    const next = await waiting;
    const waited = monotonicNow() - releasedAt;
    console.info(
      `[etcd lease-end] waiter behind a quitter's lost withdrawal granted ${waited.toFixed(0)} ms after the release`,
    );
    expect(waited).toBeLessThan(4_000);
    await next.release();
  });
});

describe('etcd: every call is bounded by callTimeoutMs', () => {
  it('release, extend, guardedPut and tryAcquire against a stopped etcd fail within callTimeoutMs', async () => {
    const { follower } = await pickFollower();
    const callTimeoutMs = 1_000;
    const holder = client([endpointOf(follower)], { callTimeoutMs });
    // Long enough to outlive the stop: the lease stays held while each call times out.
    const lease: EtcdLease = await holder.acquire('bounded', { ttlMs: 20_000 });
    const kept = await holder.acquire('bounded-2', { ttlMs: 20_000 });
    await cluster.faults.pause(follower);
    const bound = callTimeoutMs + 600;
    const calls: [string, () => Promise<unknown>][] = [
      ['guardedPut', () => guardedPut(kept, `${prefix}/data/bounded`, 'x')],
      ['extend', () => kept.extend(20_000)],
      ['tryAcquire', () => holder.tryAcquire('bounded-3', { ttlMs: 20_000 })],
      ['release', () => lease.release()],
    ];
    for (const [name, call] of calls) {
      const { error, ms } = await failure(call);
      console.info(`[etcd lease-end] ${name} against a stopped member failed after ${ms.toFixed(0)} ms`);
      expect(isFencekitError(error), `${name}: ${String(error)}`).toBe(true);
      expect(ms, `${name} took ${ms.toFixed(0)} ms`).toBeLessThan(bound);
    }
    await cluster.faults.resume(follower);
  });

  it('with one of two members stopped, every call fails over to the other within callTimeoutMs', async () => {
    const leader = await cluster.waitForLeader({ timeoutMs: 15_000 });
    const [stopped, live] = cluster.nodes.filter((n) => n.id !== leader).map((n) => n.id) as [string, string];
    const callTimeoutMs = 2_000;
    const holder = client([endpointOf(stopped), endpointOf(live)], { callTimeoutMs });
    const lease = await holder.acquire('fail-over', { ttlMs: 20_000 });
    const election = holder.election('fail-over', { ttlMs: 20_000 });
    await cluster.faults.pause(stopped);
    // Each call picks a member at random: in 12 calls one lands on the stopped member first, all but surely.
    let slowest = 0;
    for (let call = 0; call < 6; call++) {
      for (const [name, action] of [
        ['guardedPut', () => guardedPut(lease, `${prefix}/data/fail-over`, String(call))],
        ['leader', () => election.leader()],
      ] as const) {
        const started = monotonicNow();
        await action();
        const ms = monotonicNow() - started;
        slowest = Math.max(slowest, ms);
        expect(ms, `${name} took ${ms.toFixed(0)} ms`).toBeLessThan(callTimeoutMs + 500);
      }
    }
    console.info(
      `[etcd lease-end] one member stopped: 12 calls answered, the slowest in ${slowest.toFixed(0)} ms`,
    );
    await cluster.faults.resume(stopped);
    await lease.release();
  });

  it('close() against a stopped etcd returns within 2 × callTimeoutMs, a background withdrawal included', async () => {
    const { follower } = await pickFollower();
    const callTimeoutMs = 1_000;
    const holder = new EtcdClient({ hosts: [endpointOf(follower)], prefix, callTimeoutMs });
    await holder.acquire('close-bounded', { ttlMs: 20_000 });
    const failed = await holder.acquire('close-bounded-2', { ttlMs: 20_000 });
    await cluster.faults.pause(follower);
    // A failed release leaves a background withdrawal running: close() must end it too.
    await failure(() => failed.release());
    const started = monotonicNow();
    await holder.close();
    const ms = monotonicNow() - started;
    console.info(`[etcd lease-end] close() against a stopped member took ${ms.toFixed(0)} ms`);
    // A request in flight (the background withdrawal's), then the revoke.
    expect(ms).toBeLessThan(2 * callTimeoutMs + 1_000);
  });
});
