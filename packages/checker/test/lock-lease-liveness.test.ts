import { describe, expect, it } from 'vitest';
import { checkLiveness } from '../src/lock/lease-liveness.js';
import { LeaseHistory } from './lease-history-builder.js';

const MS = 1e6;
const acquire = (
  h: LeaseHistory,
  process: number,
  from: number,
  to: number | undefined,
  type: 'ok' | 'fail' = 'fail',
  resource = 'r',
) => h.op(process, 'acquire', from, to, { resource, waitMs: 4_000 }, type);

describe('checkLiveness', () => {
  it('passes waiters granted as soon as the holder lets go', () => {
    const h = new LeaseHistory().grant(1, 'a', 0, 1_000 * MS).release(1, 'a', 500 * MS);
    h.op(2, 'acquire', 10 * MS, 501 * MS, { resource: 'r', waitMs: 4_000 }, 'ok', {
      grant: 'b',
      resource: 'r',
      validUntil: String(1_500 * MS),
    });
    const result = checkLiveness(h.sorted(), { boundMs: 100 });
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ acquires: 2, starved: 0 });
    expect(result.stats.longestWaitNs).toBe(1 * MS);
  });

  it('convicts a lock left free while a waiter waits past the bound (a key that outlived its lease)', () => {
    const h = new LeaseHistory().grant(1, 'a', 0, 100 * MS).release(1, 'a', 50 * MS);
    acquire(h, 2, 10 * MS, 3_010 * MS);
    const result = checkLiveness(h.sorted(), { boundMs: 2_000 });
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]).toMatchObject({
      kind: 'starved',
      key: 'r',
      from: 50 * MS,
      waitedNs: 2_960 * MS,
      waiters: [2],
    });
  });

  it('sums the waiting of consecutive waiters inside one free stretch, each giving up before the bound', () => {
    const h = new LeaseHistory().grant(1, 'a', 0, 100 * MS).release(1, 'a', 50 * MS);
    acquire(h, 2, 100 * MS, 1_600 * MS);
    acquire(h, 3, 1_700 * MS, 3_200 * MS);
    const result = checkLiveness(h.sorted(), { boundMs: 2_000 });
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]).toMatchObject({ waitedNs: 3_000 * MS, waiters: [2, 3] });
    expect(checkLiveness(h.sorted(), { boundMs: 3_000 }).verdict).toBe('ok');
  });

  it('does not count waiting while a grant is believed valid, or while a fault is in force', () => {
    const held = new LeaseHistory().grant(1, 'a', 0, 10_000 * MS);
    acquire(held, 2, 10 * MS, 5_000 * MS);
    expect(checkLiveness(held.sorted(), { boundMs: 1_000 }).verdict).toBe('ok');
    const faulted = new LeaseHistory().fault('kill', 0, 4_000 * MS, { node: 'n1' });
    acquire(faulted, 2, 10 * MS, 4_500 * MS);
    const result = checkLiveness(faulted.sorted(), { boundMs: 1_000 });
    expect(result.verdict).toBe('ok');
    expect(result.stats.longestWaitNs).toBe(500 * MS);
    // A fault that was never stopped is in force to the end; a start that failed was never applied.
    const never = new LeaseHistory().fault('kill', 0, undefined);
    acquire(never, 2, 10 * MS, 9_000 * MS);
    expect(checkLiveness(never.sorted(), { boundMs: 1_000 }).verdict).toBe('ok');
    const refused = new LeaseHistory().op('nemesis', 'start', 0, 1, { fault: 'clock-jump' }, 'fail');
    acquire(refused, 2, 10 * MS, 9_000 * MS);
    expect(checkLiveness(refused.sorted(), { boundMs: 1_000 }).verdict).toBe('illegal');
  });

  it('gives the system settleMs after each heal to recover before waiting counts (an election after a rejoin)', () => {
    const h = new LeaseHistory().fault('partition', 0, 1_000 * MS, { halves: [['n1'], ['n2', 'n3']] });
    // Waiting from the heal on: 2.5 s, all of it after the heal.
    acquire(h, 2, 900 * MS, 3_500 * MS);
    expect(checkLiveness(h.sorted(), { boundMs: 2_000 }).verdict).toBe('illegal');
    const settled = checkLiveness(h.sorted(), { boundMs: 2_000, settleMs: 1_000 });
    expect(settled.verdict).toBe('ok');
    expect(settled.stats.longestWaitNs).toBe(1_500 * MS);
    // Settling delays the count; it does not excuse a lock stuck for good.
    const stuck = new LeaseHistory().fault('kill', 0, 1_000 * MS, { node: 'n1' });
    acquire(stuck, 2, 900 * MS, 6_000 * MS);
    expect(checkLiveness(stuck.sorted(), { boundMs: 2_000, settleMs: 2_000 }).verdict).toBe('illegal');
    expect(() => checkLiveness(h.sorted(), { settleMs: -1 })).toThrow(/settleMs/);
  });

  it('judges each resource on its own, and counts an acquire never answered as pending to the end', () => {
    const h = new LeaseHistory().grant(1, 'a', 0, 10_000 * MS, 'r1');
    acquire(h, 2, 10 * MS, undefined, 'fail', 'r2');
    h.op(3, 'buy', 9_000 * MS, 9_001 * MS, {});
    const result = checkLiveness(h.sorted(), { boundMs: 1_000 });
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]).toMatchObject({ key: 'r2', waiters: [2] });
  });

  it('is unknown without any acquire, and refuses a bad bound', () => {
    expect(checkLiveness(new LeaseHistory().op(1, 'buy', 0, 10, {}).sorted()).verdict).toBe('unknown');
    expect(() => checkLiveness([], { boundMs: 0 })).toThrow(/boundMs/);
  });

  it('merges the fault edges into each resource once (2 000 resources × 2 000 faults built 8 M edges)', () => {
    const h = new LeaseHistory();
    for (let k = 0; k < 2000; k++) h.fault(`f${k}`, 4 * k, 4 * k + 2);
    for (let k = 0; k < 2000; k++) {
      const at = 10_000 + 2 * k;
      h.op(k, 'acquire', at, at + 1, { resource: `r${k}` }, 'ok', {
        grant: `g${k}`,
        resource: `r${k}`,
        validUntil: String(at + 10),
      });
    }
    const events = h.sorted();
    const started = performance.now();
    const result = checkLiveness(events, { boundMs: 1_000 });
    // 7 s and some 400 MB of edges before; well under 1 s now, with a margin for a loaded machine.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(result).toMatchObject({ verdict: 'ok', stats: { acquires: 2000, faults: 2000, resources: 2000 } });
  });

  it("a fault healed before a resource's first edge: its free stretch starts at the heal", () => {
    const h = new LeaseHistory().fault('kill', 0, 1_000 * MS);
    h.fault('pause', 2_000 * MS, 2_500 * MS);
    acquire(h, 2, 4_000 * MS, 7_000 * MS);
    const result = checkLiveness(h.sorted(), { boundMs: 2_000 });
    expect(result.violations).toEqual([
      expect.objectContaining({ from: 2_500 * MS, to: 7_000 * MS, waitedNs: 3_000 * MS }),
    ]);
  });

  it('an acquire answered at the instant it was asked never waited (it waited to the end of the history)', () => {
    const h = new LeaseHistory();
    acquire(h, 2, 0, 0);
    acquire(h, 3, 5_000 * MS, 5_000 * MS + 1);
    const result = checkLiveness(h.sorted(), { boundMs: 1_000 });
    expect(result).toMatchObject({ verdict: 'ok', stats: { acquires: 2 } });
  });
});
