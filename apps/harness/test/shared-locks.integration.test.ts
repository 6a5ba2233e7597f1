import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../src/index.js';
import { measureMutants } from '../src/mutation/measure.js';
import { loadMutants } from '../src/mutation/mutants-module.js';
import { linesTo } from '../src/run/progress.js';
import { buildMutants } from './support/mutants.js';
import { deploy, reportsDir, run, stats } from './support/runs.js';

/**
 * The semaphore and rwlock workloads end to end on a real redis-server: short runs of the correct
 * adapter end `ok` with grants counted, and a semaphore broken on purpose (every client opens it with
 * one permit more, `redis-semaphore-extra-permit`) is convicted by both views while the unmutated
 * adapter under the same runs is not. The predictions under faults are in shared-locks.matrix.test.ts.
 */
const out = reportsDir();
let redis: Deployment;
beforeAll(async () => {
  redis = await deploy('redis');
  buildMutants();
});
afterAll(async () => {
  await redis?.close();
  rmSync(out, { recursive: true, force: true });
});

const base = { backend: 'redis' as const, clients: 4, time: '3s', out, seed: 1 };

describe('shared-lock workloads on Redis', () => {
  it('semaphore: at most N permits inside and believed, ok', async () => {
    const { results } = await run({ ...base, workload: 'semaphore' }, redis);
    expect(results.problems).toEqual([]);
    expect(results.verdict).toBe('ok');
    expect(Object.keys(results.checkers).sort()).toEqual(['bounds', 'semaphore', 'semaphore-lease']);
    // 4 clients share 2 permits: the pool is full at times, never over.
    expect(stats(results, 'semaphore').holders).toBeGreaterThan(10);
    expect(stats(results, 'semaphore').maxHeld).toBe(2);
  });

  it('rwlock: readers together, writers alone, ok', async () => {
    const { results } = await run({ ...base, workload: 'rwlock' }, redis);
    expect(results.problems).toEqual([]);
    expect(results.verdict).toBe('ok');
    const resource = stats(results, 'rwlock');
    expect(resource.readers).toBeGreaterThan(0);
    expect(resource.writers).toBeGreaterThan(0);
    expect(results.checkers['rwlock-lease']?.verdict).toBe('ok');
  });

  it('convicts a semaphore that grants N + 1; the unmutated adapter stays clean', async () => {
    const lines: string[] = [];
    const mutant = (await loadMutants()).findMutant('redis-semaphore-extra-permit');
    const { rows, baselines } = await measureMutants([mutant], {
      seeds: 1,
      budgetMs: 60_000,
      timeMs: 3_000,
      out,
      provider: 'local',
      sink: linesTo((line) => lines.push(line)),
    });
    const why = lines.filter((l) => l.startsWith('mutants:')).join('\n');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.note, why).toBeUndefined();
    expect(rows[0]!.convictedBy, why).toEqual(expect.arrayContaining(['semaphore', 'semaphore-lease']));
    expect(baselines[0]!.convictions, why).toBe(0);
  });
});
