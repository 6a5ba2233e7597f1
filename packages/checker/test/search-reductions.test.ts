import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateHard, mutate, Rng, toPorcupineLog } from '../src/bench/hard-histories.js';
import { type Operation, parseOperations } from '../src/history/index.js';
import { checkLinearizable } from '../src/linearizability/index.js';
import { casRegister, register } from '../src/models/index.js';
import { referenceLinearizable } from './property-reference.js';

/**
 * The search's reductions for ops with unknown outcome (subsumption of configurations that used more
 * of them, and skipping ops that a run of them did not help) must never change a verdict: compared
 * with the plain search (both off) and with the naive reference, on small random histories dense
 * in crashed ops.
 */

const PLAIN = { subsume: false, redundant: false } as const;

/** A random history: ops with random intervals, values 0..2, outcomes that may be wrong, many crashed. */
const randomOp = fc.record({
  f: fc.constantFrom('read', 'write', 'cas'),
  a: fc.integer({ min: 0, max: 2 }),
  b: fc.integer({ min: 0, max: 2 }),
  out: fc.integer({ min: 0, max: 2 }),
  swapped: fc.boolean(),
  crashed: fc.integer({ min: 0, max: 9 }),
  call: fc.integer({ min: 0, max: 60 }),
  length: fc.integer({ min: 1, max: 25 }),
});
type RandomOp = typeof randomOp extends fc.Arbitrary<infer T> ? T : never;

function randomHistory(spec: readonly RandomOp[], withCas: boolean): Operation[] {
  return spec.map((s, id) => {
    const f = !withCas && s.f === 'cas' ? 'write' : s.f;
    const crashed = s.crashed < 4;
    const op: Operation = {
      id,
      process: id,
      f,
      input: f === 'write' ? s.a : f === 'cas' ? [s.a, s.b] : null,
      output: f === 'read' ? s.out : f === 'cas' ? s.swapped : null,
      call: s.call,
      ret: crashed ? Number.POSITIVE_INFINITY : s.call + s.length,
      status: crashed ? 'info' : 'ok',
    };
    if (crashed) op.output = null;
    return op;
  });
}

describe('search reductions for crashed ops', () => {
  it('agree with the plain search and the reference on random cas-register histories', () => {
    fc.assert(
      fc.property(fc.array(randomOp, { minLength: 1, maxLength: 11 }), (spec) => {
        const ops = randomHistory(spec, true);
        const model = casRegister();
        const fast = checkLinearizable(ops, model, { timeoutMs: 20_000, convict: false });
        const plain = checkLinearizable(ops, model, { timeoutMs: 20_000, convict: false, search: PLAIN });
        const subsumeOnly = checkLinearizable(ops, model, {
          timeoutMs: 20_000,
          convict: false,
          search: { subsume: true, redundant: false },
        });
        const relaxed = checkLinearizable(ops, model, {
          timeoutMs: 20_000,
          convict: false,
          search: { relax: true, relaxFirst: true },
        });
        const truth = referenceLinearizable(ops, model) ? 'ok' : 'illegal';
        expect(fast.verdict).toBe(truth);
        expect(relaxed.verdict).toBe(truth);
        expect(plain.verdict).toBe(truth);
        expect(subsumeOnly.verdict).toBe(truth);
      }),
      { numRuns: 1500 },
    );
  });

  it('agree with the reference on random read/write register histories', () => {
    fc.assert(
      fc.property(fc.array(randomOp, { minLength: 1, maxLength: 11 }), (spec) => {
        const ops = randomHistory(spec, false);
        const fast = checkLinearizable(ops, register(), { timeoutMs: 20_000, convict: false });
        expect(fast.verdict).toBe(referenceLinearizable(ops, register()) ? 'ok' : 'illegal');
      }),
      { numRuns: 800 },
    );
  });

  it('agree with the plain search on small generated hard-shaped histories, mutated or not', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 3, max: 6 }),
        (seed, mutations, processes) => {
          const rng = new Rng(seed);
          const domain = 2 + rng.int(2);
          const gen = generateHard({
            seed,
            processes,
            ops: 10 + rng.int(14),
            domain,
            crash: 0.2 + rng.next() * 0.3,
            reads: 0.35,
            writes: 0.25,
          });
          for (let k = 0; k < mutations; k++)
            mutate(gen, k % 2 === 0 ? 'read-value' : 'cas-result', domain, rng);
          const ops = parseOperations(toPorcupineLog(gen), 'porcupine-log', 'generated');
          const model = casRegister();
          const fast = checkLinearizable(ops, model, { timeoutMs: 20_000 });
          const plain = checkLinearizable(ops, model, { timeoutMs: 20_000, convict: false, search: PLAIN });
          expect(fast.verdict).toBe(plain.verdict);
          expect(fast.verdict).not.toBe('unknown');
          if (mutations === 0) expect(fast.verdict).toBe('ok');
          const relaxed = checkLinearizable(ops, model, {
            timeoutMs: 20_000,
            search: { relax: true, relaxFirst: true },
          });
          expect(relaxed.verdict).toBe(fast.verdict);
          if (ops.length <= 16)
            expect(fast.verdict).toBe(referenceLinearizable(ops, model) ? 'ok' : 'illegal');
        },
      ),
      { numRuns: 400 },
    );
  });
});
