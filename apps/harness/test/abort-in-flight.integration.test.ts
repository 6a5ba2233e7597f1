import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureMutants } from '../src/mutation/measure.js';
import { loadMutants } from '../src/mutation/mutants-module.js';
import { linesTo } from '../src/run/progress.js';
import { buildMutants } from './support/mutants.js';
import { reportsDir } from './support/runs.js';

/**
 * `--abort-rate` on a real ZooKeeper: acquires given up while their create is in flight expose the
 * adapter as it was before 4647925 (the node left heading the queue: everyone else starves), and the
 * fixed adapter under the very same runs is not convicted, so the conviction is the mutant's doing.
 */
const out = reportsDir();
const lines: string[] = [];
beforeAll(() => {
  buildMutants();
});
afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

describe('--abort-rate', () => {
  it('convicts zk-create-bound-to-signal (liveness) while the fixed adapter stays clean', async () => {
    const mutant = (await loadMutants()).findMutant('zk-create-bound-to-signal');
    expect(mutant.exposure.abortRate).toBeGreaterThan(0);
    const { rows, baselines } = await measureMutants([mutant], {
      seeds: 2,
      budgetMs: 60_000,
      timeMs: 5_000,
      out,
      provider: 'local',
      sink: linesTo((line) => lines.push(line)),
    });
    const why = lines.filter((l) => l.startsWith('mutants:')).join('\n');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.note, why).toBeUndefined();
    expect(rows[0]!.convictedBy, why).toContain('liveness');
    expect(baselines).toHaveLength(1);
    expect(baselines[0]!.seedsTried).toBe(2);
    expect(baselines[0]!.convictions, why).toBe(0);
    expect(baselines[0]!.note, why).toBeUndefined();
  });
});
