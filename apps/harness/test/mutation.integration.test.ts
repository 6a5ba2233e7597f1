import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureMutants } from '../src/mutation/measure.js';
import { loadMutants } from '../src/mutation/mutants-module.js';
import { linesTo } from '../src/run/progress.js';
import { buildMutants } from './support/mutants.js';
import { reportsDir } from './support/runs.js';

/**
 * The mutation command end to end on a real redis-server: the cheapest mutant (a release that frees
 * the lock whoever holds it) is convicted under client pauses, and the unmutated adapter under the
 * very same runs is not, so the conviction is the mutant's doing.
 */
const out = reportsDir();
const lines: string[] = [];
beforeAll(() => {
  buildMutants();
});
afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

describe('fencekit mutants', () => {
  it('convicts redis-release-any-holder while the unmutated adapter stays clean', async () => {
    const mutant = (await loadMutants()).findMutant('redis-release-any-holder');
    const { rows, baselines } = await measureMutants([mutant], {
      seeds: 3,
      budgetMs: 60_000,
      // Too short for a slot of a client pause with this TTL: each seed is lengthened to the shortest run
      // that has one, as the suite does (before, every seed was refused and the mutant went unconvicted,
      // as zk-reclaim-old-lease-armed did at 10 s under `suspend`).
      timeMs: 2_000,
      out,
      provider: 'local',
      sink: linesTo((line) => lines.push(line)),
    });
    const why = lines.filter((l) => l.startsWith('mutants:')).join('\n');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.note, why).toBeUndefined();
    expect(rows[0]!.convictedBy, why).toContain('lease');
    expect(rows[0]!.harnessMs).toBeLessThan(60_000);
    expect(baselines).toHaveLength(1);
    // The unmutated adapter runs every seed the mutant could have used, not only those it took.
    expect(baselines[0]!.seedsTried).toBe(3);
    expect(baselines[0]!.convictions, why).toBe(0);
    expect(baselines[0]!.note, why).toBeUndefined();
  });
});
