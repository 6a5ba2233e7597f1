import { describe, expect, it } from 'vitest';
import { LockHistoryError } from '../src/lock/errors.js';
import { checkLeases, type LeaseViolation } from '../src/lock/lease.js';
import { leaseWindows } from '../src/lock/lease-history.js';
import { LeaseHistory } from './lease-history-builder.js';

const overlaps = (violations: LeaseViolation[]) =>
  violations.filter((v): v is Extract<LeaseViolation, { kind: 'overlap' }> => v.kind === 'overlap');

describe('checkLeases', () => {
  it('passes grants that follow each other, each released before the next', () => {
    const h = new LeaseHistory()
      .grant(1, 'a', 100, 1_100)
      .check(1, 'a', 200, true, 1_100)
      .release(1, 'a', 300)
      .grant(2, 'b', 400, 1_400)
      .release(2, 'b', 500);
    const result = checkLeases(h.sorted());
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ grants: 2, overlaps: 0, observations: 1, resources: 1 });
  });

  it('convicts a second grant while the first was still believed valid, with the validity each had left', () => {
    const h = new LeaseHistory().grant(1, 'a', 0, 1_000, 'r', 7).grant(2, 'b', 600, 1_700, 'r', 8);
    const result = checkLeases(h.sorted());
    expect(result.verdict).toBe('illegal');
    const [v] = overlaps(result.violations);
    expect(v).toMatchObject({
      from: 600,
      to: 1_000,
      firstLeftNs: 400,
      secondLeftNs: 1_100,
      processes: [1, 2],
    });
    expect(v!.first).toMatchObject({ grant: 'a', fence: '7', endedBy: 'expired' });
    expect(v!.second).toMatchObject({ grant: 'b', fence: '8' });
    expect(v!.message).toContain('grant a of process 1 (fence 7)');
  });

  it('treats windows as half-open: a release invoked at the instant of the next grant does not overlap', () => {
    const released = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .release(1, 'a', 500)
      .grant(2, 'b', 500, 1_500);
    expect(checkLeases(released.sorted()).verdict).toBe('ok');
    const expired = new LeaseHistory().grant(1, 'a', 0, 1_000).grant(2, 'b', 1_000, 2_000);
    expect(checkLeases(expired.sorted()).verdict).toBe('ok');
    const oneNsLate = new LeaseHistory().grant(1, 'a', 0, 1_001).grant(2, 'b', 1_000, 2_000);
    expect(checkLeases(oneNsLate.sorted()).verdict).toBe('illegal');
  });

  it('extends a window to the latest validUntil the client read while it held', () => {
    const extended = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .check(1, 'a', 900, true, 2_000)
      .grant(2, 'b', 1_500, 3_000);
    const result = checkLeases(extended.sorted());
    expect(result.verdict).toBe('illegal');
    expect(overlaps(result.violations)[0]).toMatchObject({ from: 1_500, to: 2_000, firstLeftNs: 500 });
    // Read only after the first validity had run out, `held: true` still counts: the client believes
    // again (a holder whose `held` survives a stall past its session is exactly what must be caught).
    const late = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .check(1, 'a', 1_200, true, 2_000)
      .grant(2, 'b', 1_500, 3_000);
    expect(checkLeases(late.sorted()).verdict).toBe('illegal');
    // Whereas a reading that says the lease is over ends it where its validity had ended.
    const over = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .check(1, 'a', 1_200, false)
      .grant(2, 'b', 1_500, 3_000);
    expect(checkLeases(over.sorted()).verdict).toBe('ok');
    expect(leaseWindows(over.sorted()).windows[0]).toMatchObject({ end: 1_000, endedBy: 'expired' });
  });

  it('follows the latest reading, not the largest: a validity that shrank ends the window earlier', () => {
    const h = new LeaseHistory()
      .grant(1, 'a', 0, 2_000)
      .check(1, 'a', 100, true, 400)
      .grant(2, 'b', 500, 3_000);
    expect(checkLeases(h.sorted()).verdict).toBe('ok');
    expect(leaseWindows(h.sorted()).windows[0]).toMatchObject({
      end: 400,
      validUntil: 400,
      endedBy: 'expired',
    });
  });

  it('ends a window where the client saw held false, or where its signal had aborted before the release', () => {
    const seen = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .check(1, 'a', 300, false)
      .grant(2, 'b', 500, 1_500);
    expect(checkLeases(seen.sorted()).verdict).toBe('ok');
    expect(leaseWindows(seen.sorted()).windows[0]).toMatchObject({ end: 300, endedBy: 'not-held' });
    const aborted = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .grant(2, 'b', 500, 1_500)
      .release(1, 'a', 900, { at: 400, reason: 'unsure' });
    expect(checkLeases(aborted.sorted()).verdict).toBe('ok');
    expect(leaseWindows(aborted.sorted()).windows[0]).toMatchObject({ end: 400, endedBy: 'not-held' });
  });

  // R4 (F7): the first `held: false` (the harness records the signal's abort so) ended the window and a
  // later `held: true` reading, which the client acts on, was ignored.
  it('believes again after a held false when a later reading says held true', () => {
    const h = new LeaseHistory()
      .grant(1, 'a', 10, 1_010)
      .check(1, 'a', 1_200, true, 2_500)
      .check(1, 'a', 1_240, true, 2_500)
      .release(1, 'a', 1_300, { at: 300, reason: 'lost' })
      .grant(2, 'b', 1_100, 2_100)
      .release(2, 'b', 1_500);
    const result = checkLeases(h.sorted());
    expect(result.verdict).toBe('illegal');
    expect(overlaps(result.violations)[0]).toMatchObject({ from: 1_100, to: 1_300 });
    expect(leaseWindows(h.sorted()).windows[0]).toMatchObject({ end: 1_300, endedBy: 'release' });
    // Read false again after that: the window ends at the later false (within the validity read).
    const lostAgain = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .check(1, 'a', 200, false)
      .check(1, 'a', 400, true, 3_000)
      .check(1, 'a', 700, false);
    expect(leaseWindows(lostAgain.sorted()).windows[0]).toMatchObject({ end: 700, endedBy: 'not-held' });
  });

  it('gives info and crashed acquires no window: the client never believed it held', () => {
    const h = new LeaseHistory()
      .op(1, 'acquire', 0, 800, { resource: 'r', waitMs: 1000 }, 'info')
      .op(3, 'acquire', 10, undefined, { resource: 'r', waitMs: 1000 })
      .grant(2, 'b', 500, 1_500)
      .release(2, 'b', 600);
    const result = checkLeases(h.sorted());
    expect(result.verdict).toBe('ok');
    expect(result.stats.grants).toBe(1);
  });

  it('keeps a crashed holder (never released) believed valid until its validUntil', () => {
    const h = new LeaseHistory().grant(1, 'a', 0, 1_000).grant(2, 'b', 999, 1_500);
    expect(checkLeases(h.sorted()).verdict).toBe('illegal');
  });

  it('judges each resource on its own', () => {
    const apart = new LeaseHistory().grant(1, 'a', 0, 1_000, 'r1').grant(2, 'b', 500, 1_500, 'r2');
    expect(checkLeases(apart.sorted())).toMatchObject({ verdict: 'ok', stats: { resources: 2 } });
    const together = new LeaseHistory()
      .grant(1, 'a', 0, 1_000, 'r1')
      .grant(2, 'b', 500, 1_500, 'r2')
      .grant(3, 'c', 700, 1_500, 'r1');
    const result = checkLeases(together.sorted());
    expect(overlaps(result.violations).map((v) => [v.key, v.first.grant, v.second.grant])).toEqual([
      ['r1', 'a', 'c'],
    ]);
  });

  it('reports every overlapping pair when three grants overlap', () => {
    const h = new LeaseHistory().grant(1, 'a', 0, 1_000).grant(2, 'b', 100, 1_000).grant(3, 'c', 200, 1_000);
    const result = checkLeases(h.sorted());
    expect(result.stats.overlaps).toBe(3);
    expect(checkLeases(h.sorted(), { maxViolations: 1 }).violations).toHaveLength(1);
  });

  it('convicts a grant handed out already past its validUntil (beyond a 1 ms grace by default)', () => {
    const h = new LeaseHistory().grant(1, 'a', 3_000_000, 1_000_000);
    const result = checkLeases(h.sorted());
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]).toMatchObject({ kind: 'expired-grant', lateNs: 2_000_000, index: 1 });
    expect(result.stats.emptyWindows).toBe(1);
    const justLate = new LeaseHistory().grant(1, 'a', 1_000, 990);
    expect(checkLeases(justLate.sorted()).verdict).toBe('ok');
    expect(checkLeases(justLate.sorted(), { expiredGraceMs: 0 }).violations[0]).toMatchObject({ lateNs: 10 });
  });

  it('a grant exactly the grace late is within it; one nanosecond more is not (was convicted at exactly 1 ms)', () => {
    expect(checkLeases(new LeaseHistory().grant(1, 'a', 1_001_000, 1_000).sorted()).verdict).toBe('ok');
    const late = checkLeases(new LeaseHistory().grant(1, 'a', 1_001_001, 1_000).sorted());
    expect(late.violations[0]).toMatchObject({ kind: 'expired-grant', lateNs: 1_000_001 });
  });

  it('keeps an unbounded lease (validUntil null) believed valid until it ends', () => {
    const open = new LeaseHistory().grant(1, 'a', 0, null).grant(2, 'b', 5_000, 6_000);
    const result = checkLeases(open.sorted());
    expect(result.verdict).toBe('illegal');
    expect(overlaps(result.violations)[0]).toMatchObject({ from: 5_000, to: 6_000, firstLeftNs: Infinity });
    const released = new LeaseHistory()
      .grant(1, 'a', 0, null)
      .release(1, 'a', 100)
      .grant(2, 'b', 5_000, 6_000);
    expect(checkLeases(released.sorted()).verdict).toBe('ok');
  });

  it('links facts by grant id across a process change (after an info the client goes on as a new process)', () => {
    const h = new LeaseHistory()
      .grant(1, 'a', 0, 1_000)
      .op(1, 'buy', 100, 200, { grant: 'a' }, 'info')
      .op(6, 'buy', 300, 301, { grant: 'a' }, 'ok', {
        lease: { grant: 'a', held: true, validUntil: '5000', at: '300' },
      })
      .grant(2, 'b', 2_000, 3_000);
    const result = checkLeases(h.sorted());
    expect(result.verdict).toBe('illegal');
    expect(result.stats.unlinked).toBe(0);
  });

  it('links facts without grant ids to the same process’s latest grant (histories from elsewhere)', () => {
    const h = new LeaseHistory()
      .op(1, 'acquire', 0, 10, { resource: 'r' }, 'ok', { validUntil: '1000' })
      .op(1, 'release', 400, 410, {})
      .op(2, 'acquire', 5, 500, { resource: 'r' }, 'ok', { validUntil: '1500' });
    expect(checkLeases(h.sorted()).verdict).toBe('ok');
    const windows = leaseWindows(h.sorted()).windows;
    expect(windows.map((w) => [w.grant, w.key, w.end])).toEqual([
      ['#2', 'r', 400],
      ['#5', 'r', 1_500],
    ]);
  });

  it('reads histories out of time order', () => {
    const h = new LeaseHistory().grant(2, 'b', 600, 1_700).grant(1, 'a', 0, 1_000);
    expect(checkLeases(h.events).verdict).toBe('illegal');
  });

  it('is unknown with nothing to judge', () => {
    const h = new LeaseHistory().op(1, 'acquire', 0, 10, { resource: 'r' }, 'fail');
    const result = checkLeases(h.sorted());
    expect(result.verdict).toBe('unknown');
    expect(result.error).toMatch(/nothing to check/);
    expect(result.nothingToCheck).toBe('no lease grants (ok events with value.validUntil)');
  });

  it('names the event and field of a malformed fact', () => {
    const badTime = new LeaseHistory().op(1, 'acquire', 0, 10, {}, 'ok', { validUntil: 'soon' });
    expect(() => checkLeases(badTime.sorted())).toThrow(LockHistoryError);
    expect(() => checkLeases(badTime.sorted())).toThrow(/Event 1: expected "value.validUntil" as ns/);
    const noHeld = new LeaseHistory()
      .grant(1, 'a', 0, 100)
      .op(1, 'buy', 10, 20, {}, 'ok', { lease: { grant: 'a' } });
    expect(() => checkLeases(noHeld.sorted())).toThrow(/value.lease/);
    const twice = new LeaseHistory().grant(1, 'a', 0, 100).grant(2, 'a', 10, 100);
    expect(() => checkLeases(twice.sorted())).toThrow(/grant id used once/);
  });
});
