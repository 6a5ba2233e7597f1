import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { injectCluster } from '@fencekit/cluster/vitest';
import { LockLostError, monotonicNow, NotLockHolderError } from '@fencekit/core';
import { UNSURE, ZkElection, ZkLockClient } from '@fencekit/zk';
import { afterEach, describe, expect, it } from 'vitest';
import { followerLagMs } from './support/ensemble.js';

/**
 * A holder whose process stalls (GC pause, CPU-bound code) for longer than its session timeout: the
 * ensemble expires its session and grants the next waiter meanwhile. Its lease or leadership must
 * read as over on the very first line that runs after the stall, before any event is delivered.
 */
const servers = injectCluster('zookeeper').endpoints.join(',');
/** The stalled holder's session. */
const holderSessionMs = 4_000;
/** The waiter's: it shares the stalled event loop here, so its session must outlive the stall. */
const waiterSessionMs = 30_000;
/** Past the holder's session timeout plus ZooKeeper's expiry rounding (a tick, 500 ms) and slack. */
const stallMs = holderSessionMs + 2_000;

const open: { close(): Promise<void> }[] = [];
function track<T extends { close(): Promise<void> }>(thing: T): T {
  open.push(thing);
  return thing;
}
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((t) => t.close()));
});

function unique(label: string): string {
  return `stall/${label}/${Math.random().toString(36).slice(2)}`;
}

const checkingHolder = fileURLToPath(new URL('./fixtures/checking-holder.mjs', import.meta.url));

/** Now on the host-wide clock the fixture prints (ms). */
function sharedNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Blocks the event loop: nothing else in this process runs (no timer, no socket event). */
function stall(ms: number): void {
  const until = monotonicNow() + ms;
  while (monotonicNow() < until) {
    // busy: a synchronous stall, as a long GC pause or CPU-bound code is
  }
}

/** Polls `check` every 50 ms until it is true, at most `withinMs`. */
async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = monotonicNow() + withinMs;
  while (monotonicNow() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('a holder stalled past its session timeout', () => {
  it('lock: held is false and validUntil is capped by the session on the first line after the stall', async () => {
    const holder = track(new ZkLockClient({ servers, sessionTimeoutMs: holderSessionMs, followerLagMs }));
    const waiter = track(new ZkLockClient({ servers, sessionTimeoutMs: waiterSessionMs, followerLagMs }));
    const resource = unique('lock');
    const lease = await holder.acquire(resource, { ttlMs: 60_000 });
    const waiting = waiter.acquire(resource, { ttlMs: 60_000, waitMs: 30_000 });
    waiting.catch(() => {});
    const folder = holder.folderOf(resource);
    expect(
      await eventually(async () => (await waiter.session.children(folder)).children.length === 2, 5_000),
    ).toBe(true);
    expect(lease.held).toBe(true);

    // The last request the holder's session gets answered before the stall: its send time bounds validity.
    const lastSentAt = monotonicNow();
    await holder.session.exists('/');
    stall(stallMs);
    const held = lease.held;
    const validUntil = lease.validUntil;
    const aborted = lease.signal.aborted;
    const readAt = monotonicNow();

    expect(held).toBe(false);
    expect(aborted).toBe(true);
    expect(validUntil).toBeLessThan(readAt);
    expect(validUntil).toBeLessThanOrEqual(lastSentAt + holder.session.sessionTimeoutMs + 1);
    expect(lease.remainingMs()).toBe(0);
    await expect(lease.extend(60_000)).rejects.toBeInstanceOf(LockLostError);

    // Meanwhile the ensemble expired the holder's session and granted the waiter.
    const next = await waiting;
    expect(next.fence).toBeGreaterThan(lease.fence);
    expect(lease.held).toBe(false);
    await next.release();
  }, 60_000);

  it('election: isLeader is false and the signal aborted on the first line after the stall', async () => {
    const name = unique('election');
    const leader = track(new ZkElection(name, { servers, sessionTimeoutMs: holderSessionMs, followerLagMs }));
    const heir = track(new ZkElection(name, { servers, sessionTimeoutMs: waiterSessionMs, followerLagMs }));
    const leadership = await leader.campaign('stalled', { waitMs: 10_000 });
    const campaigning = heir.campaign('heir', { waitMs: 30_000 });
    campaigning.catch(() => {});
    expect(await eventually(async () => (await heir.leader())?.candidate === 'stalled', 5_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));

    await leader.session.exists('/');
    stall(stallMs);
    const isLeader = leadership.isLeader;
    const aborted = leadership.signal.aborted;

    expect(isLeader).toBe(false);
    expect(aborted).toBe(true);
    const next = await campaigning;
    expect(next.term).toBeGreaterThan(leadership.term);
    await next.resign();
  }, 60_000);

  it('lock, holder SIGSTOPped in its own process: no check it made believes in validity past the next grant', async () => {
    const resource = unique('sigstop');
    const child = spawn(
      process.execPath,
      [checkingHolder, servers, resource, String(holderSessionMs), String(followerLagMs)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    track({ close: async () => void child.kill('SIGKILL') });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await once(child.stdout, 'data', { signal: AbortSignal.timeout(20_000) });
    expect(output).toMatch(/^held \d+/);
    const waiter = track(new ZkLockClient({ servers, sessionTimeoutMs: holderSessionMs, followerLagMs }));
    const waiting = waiter.acquire(resource, { ttlMs: 60_000, waitMs: 30_000 });
    waiting.catch(() => {});
    await new Promise((r) => setTimeout(r, 500));

    child.kill('SIGSTOP');
    const next = await waiting;
    const grantedAt = sharedNow();
    await new Promise((r) => setTimeout(r, 300));
    const resumedAt = sharedNow();
    child.kill('SIGCONT');
    await new Promise((r) => setTimeout(r, 1_000));
    child.kill('SIGKILL');

    const checks = output
      .split('\n')
      .filter((line) => line.startsWith('check '))
      .map((line) => {
        const [, held, validUntil, at] = line.split(' ');
        return { held: held === 'true', validUntil: Number(validUntil), at: Number(at) };
      });
    const after = checks.filter((c) => c.at >= resumedAt);
    expect(after.length).toBeGreaterThan(0);
    expect(after[0]!.held).toBe(false);
    // What a lease checker convicts: a check that believed the lease valid past the waiter's grant.
    const believedPastGrant = checks.filter((c) => c.held && c.validUntil > grantedAt);
    expect(believedPastGrant, JSON.stringify(believedPastGrant.slice(0, 3))).toEqual([]);
    await next.release();
  }, 60_000);

  it('a waiter SIGSTOPped past its session timeout is not granted on the notification that queued up meanwhile', async () => {
    const resource = unique('waiter');
    const holder = track(new ZkLockClient({ servers, sessionTimeoutMs: holderSessionMs, followerLagMs }));
    const third = track(new ZkLockClient({ servers, sessionTimeoutMs: holderSessionMs, followerLagMs }));
    const first = await holder.acquire(resource, { ttlMs: 60_000 });
    // The waiter in its own process (second in line): prints "held <fence>" once granted, then checks.
    const child = spawn(
      process.execPath,
      [checkingHolder, servers, resource, String(holderSessionMs), String(followerLagMs)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    track({ close: async () => void child.kill('SIGKILL') });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const folder = holder.folderOf(resource);
    const queued = async (n: number) => (await holder.session.children(folder)).children.length === n;
    expect(await eventually(() => queued(2), 10_000)).toBe(true);
    const thirdWaiting = third.acquire(resource, { ttlMs: 60_000, waitMs: 30_000 });
    thirdWaiting.catch(() => {});
    expect(await eventually(() => queued(3), 5_000)).toBe(true);

    child.kill('SIGSTOP');
    // While the waiter is stopped: the release notifies it (the event waits in its socket), then its
    // session expires, its node goes, and the third in line is granted.
    await first.release();
    const thirdLease = await thirdWaiting;
    child.kill('SIGCONT');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(thirdLease.held).toBe(true);
    // A grant to the waiter now would make two holders: its node and session are gone.
    expect(output).not.toMatch(/^held /m);
    await thirdLease.release();
    // It queued again with a new session, and gets the lock in turn.
    expect(await eventually(async () => /^held /m.test(output), 10_000)).toBe(true);
  }, 60_000);

  describe('for less than its session timeout, but past what the last answer vouches for (⅔ of it)', () => {
    /** The session survives a stall of 6.5 s (ZooKeeper expires it after 9 s without a word). */
    const sessionTimeoutMs = 9_000;
    const shortStallMs = 6_500;

    async function stalledHolder(label: string) {
      const holder = track(new ZkLockClient({ servers, sessionTimeoutMs, followerLagMs }));
      const waiter = track(new ZkLockClient({ servers, sessionTimeoutMs: waiterSessionMs, followerLagMs }));
      const resource = unique(label);
      const lease = await holder.acquire(resource, { ttlMs: 60_000 });
      let grantedAt: number | undefined;
      const waiting = waiter.acquire(resource, { ttlMs: 60_000, waitMs: 40_000 }).then((l) => {
        grantedAt = monotonicNow();
        return l;
      });
      waiting.catch(() => {});
      const folder = holder.folderOf(resource);
      expect(
        await eventually(async () => (await waiter.session.children(folder)).children.length === 2, 5_000),
      ).toBe(true);
      await holder.session.exists('/');
      stall(shortStallMs);
      const held = lease.held;
      const stalledUntil = monotonicNow();
      expect(held).toBe(false);
      expect((lease.signal.reason as LockLostError).reason).toBe(UNSURE);
      return { holder, lease, waiting, grantedAt: () => grantedAt, stalledUntil };
    }

    it('the lease ends unsure; reclaim gives the same node and fence back, and the old lease cannot release it', async () => {
      const { holder, lease, waiting, grantedAt } = await stalledHolder('short-reclaim');
      const reclaimed = await holder.reclaim(lease, { ttlMs: 60_000, waitMs: 5_000 });
      expect(reclaimed.node).toBe(lease.node);
      expect(reclaimed.fence).toBe(lease.fence);
      expect(reclaimed.held).toBe(true);
      await expect(lease.release()).rejects.toBeInstanceOf(NotLockHolderError);
      await expect(holder.reclaim(lease, { ttlMs: 60_000 })).rejects.toBeInstanceOf(LockLostError);
      await new Promise((r) => setTimeout(r, 500));
      expect(grantedAt()).toBeUndefined();
      expect(await holder.session.exists(reclaimed.node)).not.toBeNull();
      await reclaimed.release();
      await (await waiting).release();
    }, 60_000);

    it('unreclaimed, its node is given up one session timeout later: the waiter does not starve', async () => {
      const { lease, waiting, grantedAt, stalledUntil } = await stalledHolder('short-unclaimed');
      const next = await waiting;
      expect(next.fence).toBeGreaterThan(lease.fence);
      expect(grantedAt()! - stalledUntil).toBeLessThan(sessionTimeoutMs + 3_000);
      await next.release();
    }, 60_000);
  });
});
