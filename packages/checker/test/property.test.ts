import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Operation } from '../src/history/index.js';
import { checkLinearizable } from '../src/linearizability/index.js';
import { type AnyModel, casRegister, kv, mutex } from '../src/models/index.js';
import { referenceLinearizable } from './property-reference.js';

/** One op of a sequential run, before timing: what it does and whether its outcome gets lost. */
const registerStep = fc.record({
  f: fc.constantFrom('read', 'write', 'cas'),
  a: fc.integer({ min: 0, max: 3 }),
  b: fc.integer({ min: 0, max: 3 }),
  lost: fc.boolean(),
  early: fc.integer({ min: 0, max: 40 }),
  late: fc.integer({ min: 0, max: 40 }),
});

type RegisterStep = typeof registerStep extends fc.Arbitrary<infer T> ? T : never;

/**
 * Runs the steps one after another on a cas-register, each taking effect at time 10·i, then blurs
 * each op's interval around that instant (random concurrency). Lost ops become `info` (ret =
 * Infinity) — they did happen, at their instant, so the history stays linearizable.
 */
function sequentialHistory(steps: readonly RegisterStep[]): Operation[] {
  let state: number | null = null;
  return steps.map((s, i) => {
    const at = 10 * i + 5;
    const op: Operation = {
      id: i,
      process: i,
      f: s.f,
      input: null,
      output: null,
      call: at - s.early,
      ret: s.lost && s.f !== 'read' ? Number.POSITIVE_INFINITY : at + s.late,
      status: s.lost && s.f !== 'read' ? 'info' : 'ok',
    };
    if (s.f === 'read') op.output = state;
    else if (s.f === 'write') {
      op.input = s.a;
      state = s.a;
    } else {
      op.input = [s.a, s.b];
      op.output = state === s.a;
      if (state === s.a) state = s.b;
    }
    return op;
  });
}

describe('property: histories from a sequential execution', () => {
  it('are always ok', () => {
    fc.assert(
      fc.property(fc.array(registerStep, { minLength: 1, maxLength: 160 }), (steps) => {
        const result = checkLinearizable(sequentialHistory(steps), casRegister(), { timeoutMs: 10_000 });
        expect(result.verdict).toBe('ok');
      }),
      { numRuns: 300 },
    );
  });

  it('with one read altered to a never-written value are always illegal (with and without convictions)', () => {
    const withRead = fc
      .tuple(fc.array(registerStep, { minLength: 1, maxLength: 60 }), fc.nat())
      .filter(([steps]) => steps.some((s) => s.f === 'read'));
    fc.assert(
      fc.property(withRead, fc.boolean(), ([steps, pick], convict) => {
        const ops = sequentialHistory(steps);
        const reads = ops.filter((op) => op.f === 'read');
        (reads[pick % reads.length] as Operation).output = 99;
        const result = checkLinearizable(ops, casRegister(), { timeoutMs: 10_000, convict });
        expect(result.verdict).toBe('illegal');
        expect(result.partitions[0]?.witness?.unplaced.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });
});

/** Small random histories with random outputs: linearizable or not, the search must agree with brute force. */
function randomOps(model: 'register' | 'kv' | 'mutex') {
  const op = fc.record({
    kind: fc.integer({ min: 0, max: 2 }),
    a: fc.integer({ min: 0, max: 2 }),
    b: fc.integer({ min: 0, max: 2 }),
    call: fc.integer({ min: 0, max: 30 }),
    length: fc.integer({ min: 0, max: 15 }),
    open: fc.integer({ min: 0, max: 5 }),
  });
  return fc.array(op, { minLength: 1, maxLength: 7 }).map((raw) =>
    raw.map((r, id): Operation => {
      const open = r.open === 0 && r.kind !== 0;
      const base = {
        id,
        process: id,
        call: r.call,
        ret: open ? Number.POSITIVE_INFINITY : r.call + r.length,
        status: open ? ('info' as const) : ('ok' as const),
      };
      if (model === 'mutex') {
        const fence = r.kind === 2 ? { fence: String(r.b) } : null;
        return { ...base, process: r.a, f: r.kind === 0 ? 'release' : 'acquire', input: null, output: fence };
      }
      if (model === 'kv') {
        const value = ['x', 'y', 'xy', ''][r.a] as string;
        if (r.kind === 0)
          return { ...base, key: 'k', f: 'get', input: null, output: ['', 'x', 'y', 'xy', 'yx'][r.b] };
        return { ...base, key: 'k', f: r.kind === 1 ? 'put' : 'append', input: value, output: null };
      }
      if (r.kind === 0) return { ...base, f: 'read', input: null, output: r.b === 2 ? null : r.a };
      if (r.kind === 1) return { ...base, f: 'write', input: r.a, output: null };
      return { ...base, f: 'cas', input: [r.a, r.b], output: r.length % 2 === 0 };
    }),
  );
}

describe('property: the search agrees with a naive memoised search on longer histories', () => {
  it('on sequential cas-register histories with two outputs swapped (often illegal, needs backtracking)', () => {
    const swapped = fc.tuple(fc.array(registerStep, { minLength: 2, maxLength: 90 }), fc.nat(), fc.nat());
    fc.assert(
      fc.property(swapped, fc.boolean(), ([steps, i, j], convict) => {
        const ops = sequentialHistory(steps);
        const reads = ops.filter((op) => op.f === 'read' || op.f === 'cas');
        if (reads.length >= 2) {
          const a = reads[i % reads.length] as Operation;
          const b = reads[j % reads.length] as Operation;
          if (a.f === b.f) [a.output, b.output] = [b.output, a.output];
        }
        const expected = referenceLinearizable(ops, casRegister()) ? 'ok' : 'illegal';
        expect(checkLinearizable(ops, casRegister(), { timeoutMs: 10_000, convict }).verdict).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('property: the search agrees with brute force', () => {
  const cases: [string, 'register' | 'kv' | 'mutex', () => AnyModel][] = [
    ['cas-register', 'register', () => casRegister()],
    ['kv', 'kv', () => kv()],
    ['mutex', 'mutex', () => mutex()],
  ];
  for (const [name, kind, model] of cases) {
    it(`on random small ${name} histories`, () => {
      fc.assert(
        fc.property(randomOps(kind), fc.boolean(), (ops, convict) => {
          const expected = referenceLinearizable(ops, model()) ? 'ok' : 'illegal';
          expect(checkLinearizable(ops, model(), { timeoutMs: 10_000, convict }).verdict).toBe(expected);
        }),
        { numRuns: 1000 },
      );
    });
  }
});
