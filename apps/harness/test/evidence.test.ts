import { describe, expect, it } from 'vitest';
import { parseRunOptions } from '../src/run/options.js';
import {
  cellEvidence,
  cellKey,
  cellOf,
  describeEvidence,
  median,
  wilsonInterval,
} from '../src/suite/evidence.js';
import { suiteMatrix } from '../src/suite/matrix.js';

/**
 * The Wilson score interval against published values: Newcombe, "Two-sided confidence intervals for the
 * single proportion: comparison of seven methods", Statistics in Medicine 17 (1998), Table I, method 3
 * (score interval without continuity correction), given there to four decimals.
 */
describe('wilsonInterval', () => {
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])('%i of %i → [%f, %f] as Newcombe tabulates', (k, n, low, high) => {
    const interval = wilsonInterval(k, n)!;
    expect(interval.low).toBeCloseTo(low, 4);
    expect(interval.high).toBeCloseTo(high, 4);
  });

  it('is symmetric around one half and pinned to 0 and 1 at the ends', () => {
    expect(wilsonInterval(5, 10)).toEqual({
      low: expect.closeTo(0.2366, 4),
      high: expect.closeTo(0.7634, 4),
    });
    expect(wilsonInterval(20, 20)).toEqual({ low: expect.closeTo(0.8389, 4), high: 1 });
    expect(wilsonInterval(0, 1)).toEqual({ low: 0, high: expect.closeTo(0.7935, 4) });
  });

  it('says nothing without trials and refuses counts that cannot be', () => {
    expect(wilsonInterval(0, 0)).toBeUndefined();
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1, Number.NaN)).toThrow(RangeError);
  });
});

describe('cellEvidence', () => {
  it('counts convictions over judged runs only, and takes the median time over the timed convictions', () => {
    const cell = cellEvidence([
      { verdict: 'illegal', firstViolationMs: 900 },
      { verdict: 'illegal', firstViolationMs: 300 },
      { verdict: 'illegal', firstViolationMs: undefined },
      { verdict: 'ok', firstViolationMs: null },
      { verdict: 'unknown', firstViolationMs: 50 },
    ]);
    expect(cell).toMatchObject({
      runs: 5,
      judged: 4,
      convicted: 3,
      unknown: 1,
      rate: 0.75,
      timedConvictions: 2,
    });
    expect(cell.medianFirstViolationMs).toBe(600);
    expect(cell.interval!.low).toBeCloseTo(0.3006, 4);
    expect(cell.interval!.high).toBeCloseTo(0.9544, 4);
    expect(describeEvidence(cell)).toBe('3/4 (75 %, 95 % CI 30–95 %)');
  });

  it('an all-unknown cell has no rate, no interval and says so', () => {
    const cell = cellEvidence([{ verdict: 'unknown', firstViolationMs: undefined }]);
    expect(cell.rate).toBeUndefined();
    expect(cell.interval).toBeUndefined();
    expect(describeEvidence(cell)).toBe('0 judged of 1');
  });

  it('median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });
});

describe('cellOf', () => {
  // R4 (F8): the key was backend × faults × fencing, so memory|pause-client|on pooled cas with cron.
  it('keys every suite entry by workload too: no two workloads share a cell', () => {
    for (const short of [true, false]) {
      const workloadsOf = new Map<string, Set<string>>();
      for (const entry of suiteMatrix(short, 1)) {
        const o = parseRunOptions({ ...entry.options, out: '/tmp/unused', provider: 'local' });
        const key = cellKey(
          cellOf({
            backend: o.backend,
            workload: o.workload,
            faults: o.fault,
            scenario: o.scenario ?? null,
            fencing: o.fencing,
          }),
        );
        workloadsOf.set(key, (workloadsOf.get(key) ?? new Set()).add(o.workload));
      }
      const pooled = [...workloadsOf].filter(([, w]) => w.size > 1).map(([k]) => k);
      expect(pooled).toEqual([]);
    }
  });
});
