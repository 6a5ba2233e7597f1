import { describe, expect, it } from 'vitest';
import { asCheckResult } from '../src/cli/run.js';
import type { Operation } from '../src/history/index.js';
import { checkLinearizable, type LinearizabilityResult } from '../src/linearizability/index.js';
import { type AnyModel, applySemantics, casRegister, SemanticsTimeoutError } from '../src/models/index.js';

/**
 * #15 review F5: with 100 000 independent keys `--timeout 6s` took 14.7 s, because setting up each key
 * (splitting by key, laying out and preparing its ops, convicting) never looked at the clock. These
 * tests assert that the work stops, not how long it took.
 */
function independentHistory(keys: number): Operation[] {
  const ops: Operation[] = [];
  for (let k = 0; k < keys; k++) {
    const t = k * 10;
    ops.push(
      {
        id: ops.length,
        process: 0,
        f: 'write',
        input: [k, 1],
        output: [k, 1],
        call: t,
        ret: t + 1,
        status: 'ok',
      },
      {
        id: ops.length + 1,
        process: 1,
        f: 'read',
        input: [k, null],
        output: [k, 1],
        call: t + 2,
        ret: t + 3,
        status: 'ok',
      },
    );
  }
  return ops;
}

describe('the time budget bounds the per-key work (review F5)', () => {
  it('stops preparing keys once the budget is spent: the rest are unknown (timeout), never prepared', () => {
    const split = applySemantics(independentHistory(20_000), 'cas-register', casRegister(), {
      semantics: 'knossos',
    });
    expect(split.applied.independent.keys).toBe(20_000);
    let prepared = 0;
    const inner = split.model;
    // The first key's setup outlasts the whole 20 ms budget, so no other key may be set up.
    const slow: AnyModel = {
      ...inner,
      prepare(op: Operation) {
        if (prepared++ === 0) {
          const until = performance.now() + 40;
          while (performance.now() < until);
        }
        return inner.prepare(op);
      },
    };
    const result = checkLinearizable(split.ops, slow, { timeoutMs: 20 });
    expect(result.verdict).toBe('unknown');
    expect(result.partitions).toHaveLength(20_000);
    // Only the key being set up when the budget ran out was prepared (its two ops); before, all 40 000 were.
    expect(prepared).toBeLessThanOrEqual(2);
    const unreached = result.partitions.filter((p) => p.reason === 'timeout' && p.steps === 0);
    expect(unreached.length).toBeGreaterThanOrEqual(19_999);
    // Unreached keys still say which ops they hold.
    expect(unreached.at(-1)?.opIds).toHaveLength(2);
  });

  it('searches no further key once the budget is spent, though each small key decides at once', () => {
    const split = applySemantics(independentHistory(2_000), 'cas-register', casRegister(), {
      semantics: 'knossos',
    });
    const inner = split.model;
    let steps = 0;
    // The first search step outlasts the 1.5 s budget (setting 2 000 keys up takes a few ms).
    const slow: AnyModel = {
      ...inner,
      step(state: unknown, op: unknown) {
        if (steps++ === 0) {
          const until = performance.now() + 1_600;
          while (performance.now() < until);
        }
        return inner.step(state, op);
      },
    };
    const result = checkLinearizable(split.ops, slow, { timeoutMs: 1_500 });
    expect(result.verdict).toBe('unknown');
    // The first key alone was searched (its two ops); before, all 2 000 were, after the deadline.
    expect(steps).toBeLessThanOrEqual(2);
    expect(
      result.partitions.filter((p) => p.reason === 'timeout' && p.steps === 0).length,
    ).toBeGreaterThanOrEqual(1_999);
  });

  it('stops splitting by key once the budget is spent (SemanticsTimeoutError, which the CLI answers unknown)', () => {
    const ops = independentHistory(20_000);
    const past = performance.now() - 1;
    expect(() =>
      applySemantics(ops, 'cas-register', casRegister(), { semantics: 'knossos', deadline: past }),
    ).toThrow(SemanticsTimeoutError);
    // Within the budget nothing changes.
    const split = applySemantics(ops, 'cas-register', casRegister(), {
      semantics: 'knossos',
      deadline: performance.now() + 600_000,
    });
    expect(split.applied.independent.keys).toBe(20_000);
  });

  it('splits 100 000 keys without overflowing the stack (the split ops were spread as arguments)', () => {
    const split = applySemantics(independentHistory(100_000), 'cas-register', casRegister(), {
      semantics: 'knossos',
    });
    expect(split.ops).toHaveLength(200_000);
  });
});

describe('the undecided message (review F6)', () => {
  it('names the first 20 undecided keys and says how many more there are', () => {
    const result: LinearizabilityResult = {
      verdict: 'unknown',
      partitions: Array.from({ length: 100 }, (_, k) => ({
        key: String(k),
        verdict: 'unknown' as const,
        reason: 'timeout' as const,
        opIds: [],
        steps: 0,
        cacheEntries: 0,
        ms: 0,
      })),
      stats: { ops: 0, partitions: 100, steps: 0, ms: 0, peakBytes: 0 },
    };
    const error = asCheckResult(result).error ?? '';
    expect(error).toMatch(/^100 partition\(s\) undecided: 0 \(timeout\), 1 \(timeout\), /);
    expect(error).toContain('19 (timeout), … and 80 more (partitions[] in --json has every one)');
    expect(error).not.toContain('20 (timeout)');
  });
});
