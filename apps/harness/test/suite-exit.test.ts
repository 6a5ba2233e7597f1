import { describe, expect, it } from 'vitest';
import { suiteExitCode } from '../src/suite/exit.js';
import { suiteMatrix } from '../src/suite/matrix.js';
import type { SuiteOutcome } from '../src/suite/suite.js';

const [entry] = suiteMatrix(true, 1);
const run = (verdict: 'ok' | 'illegal' | 'unknown') =>
  ({ id: 'r', dir: 'reports/r', verdict, meta: {} }) as NonNullable<SuiteOutcome['run']>;

describe('fencekit suite exit code (issue #16: it exited 0 whatever the runs said)', () => {
  it('is 0 when every run ran as predicted', () => {
    expect(suiteExitCode([{ entry: entry!, run: run('ok'), agrees: true }])).toBe(0);
  });

  it('is 1 when a verdict differs from its prediction', () => {
    const outcomes: SuiteOutcome[] = [
      { entry: entry!, run: run('ok'), agrees: true },
      { entry: entry!, run: run('illegal'), agrees: false },
    ];
    expect(suiteExitCode(outcomes)).toBe(1);
  });

  it('is 3 when a run errored or could not run, even beside a mismatch', () => {
    const outcomes: SuiteOutcome[] = [
      { entry: entry!, run: run('illegal'), agrees: false },
      { entry: entry!, error: 'redis-server not found', agrees: false },
    ];
    expect(suiteExitCode(outcomes)).toBe(3);
  });

  it('starts every cell at --seed', () => {
    expect(suiteMatrix(true, 2, 40).map((e) => e.options.seed)).toContain(41);
    expect(suiteMatrix(true, 1).every((e) => e.options.seed === 7)).toBe(true);
  });
});
