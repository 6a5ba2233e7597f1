import { describe, expect, it } from 'vitest';
import { monotonicNow } from '../src/clock.js';
import { LockLostError } from '../src/errors.js';
import { ManagedLease } from '../src/lease.js';

/** A lease with a 60 s TTL whose validity is also capped at `cap.at` (moved by the test). */
function cappedLease(capMs: number) {
  const cap = { at: monotonicNow() + capMs };
  let ended = 0;
  const lease = new ManagedLease<bigint>({
    resource: 'r',
    owner: 'o',
    fence: 1n,
    sentAt: monotonicNow(),
    ttlMs: 60_000,
    validityCap: { until: () => cap.at, reason: 'cap ran out' },
    onEnd: () => {
      ended++;
    },
    operations: { extend: async () => {}, release: async () => {} },
  });
  return { lease, cap, endedCount: () => ended };
}

/** Blocks the event loop, as a GC pause would: no timer can run meanwhile. */
function stall(ms: number): void {
  const until = monotonicNow() + ms;
  while (monotonicNow() < until) {
    // busy
  }
}

describe('ManagedLease with a validity cap', () => {
  it('validUntil is the earlier of the TTL and the cap, read when asked', () => {
    const { lease, cap } = cappedLease(1_000);
    expect(lease.validUntil).toBe(cap.at);
    cap.at += 500;
    expect(lease.validUntil).toBe(cap.at);
    expect(lease.remainingMs()).toBeGreaterThan(1_000);
    cap.at += 120_000;
    expect(lease.validUntil).toBeLessThan(cap.at);
    lease.markLost('test over');
  });

  it('past the cap, the first read after a stall already sees the lease over, with the cap reason', () => {
    const { lease, cap, endedCount } = cappedLease(20);
    stall(40);
    expect(lease.held).toBe(false);
    expect(lease.signal.aborted).toBe(true);
    expect((lease.signal.reason as LockLostError).reason).toBe('cap ran out');
    expect(endedCount()).toBe(1);
    // Frozen at the end: a cap that moves later does not revive the validity.
    const frozen = lease.validUntil;
    cap.at += 60_000;
    expect(lease.validUntil).toBe(frozen);
    expect(lease.held).toBe(false);
  });

  it('an extension that comes back after the cap ran out ends the lease and throws', async () => {
    const { lease, cap } = cappedLease(60_000);
    const extending = lease.extend(30_000);
    cap.at = monotonicNow() - 1;
    await expect(extending).rejects.toBeInstanceOf(LockLostError);
    expect(lease.held).toBe(false);
  });
});
