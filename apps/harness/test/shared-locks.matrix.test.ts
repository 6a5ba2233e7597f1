import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../src/index.js';
import { deploy, reportsDir, run, stats } from './support/runs.js';

/**
 * The suite's predictions for the shared-lock workloads (suite/matrix.ts), over seeds, on the memory
 * backend and a real redis-server:
 * - rwlock, fencing on, under client pauses: `ok`, and the pauses did land past leases (overlaps the
 *   fence excused, or stale accesses refused); fencing off: convicted (a lapsed holder inside with a
 *   writer, or its stale write accepted).
 * - semaphore under client pauses: the resource's count convicted (a lapsed holder is an excess that no
 *   fence can refuse), while the clients' beliefs stay `ok`: the semaphore kept its own promise.
 * - both under kill: `ok`. A killed server forgets every grant (no persistence), but the fault is held
 *   past a TTL, so every grant believed before it has lapsed before the restarted server grants again.
 */
const out = reportsDir();
let redis: Deployment;
beforeAll(async () => {
  redis = await deploy('redis');
});
afterAll(async () => {
  await redis?.close();
  rmSync(out, { recursive: true, force: true });
});

const SEEDS = [1, 2];
const BACKENDS = ['memory', 'redis'] as const;
const on = (backend: (typeof BACKENDS)[number]) => (backend === 'redis' ? redis : undefined);

describe.each(BACKENDS)('shared locks on %s under faults', (backend) => {
  const base = { backend, clients: 4, time: '6s', out };

  it.each(SEEDS)('rwlock under client pauses: ok with fencing, convicted without (seed %i)', async (seed) => {
    const fenced = await run({ ...base, workload: 'rwlock', fault: 'pause-client', seed }, on(backend));
    expect(fenced.run.meta.faultsApplied.some((f) => f.applied)).toBe(true);
    expect(fenced.results.verdict).toBe('ok');
    const resource = stats(fenced.results, 'rwlock');
    expect(Number(resource.overlapsPastLease) + Number(resource.staleRefused)).toBeGreaterThan(0);
    const unfenced = await run(
      { ...base, workload: 'rwlock', fault: 'pause-client', fencing: false, seed },
      on(backend),
    );
    expect(unfenced.results.checkers.rwlock?.verdict).toBe('illegal');
    expect(unfenced.results.checkers['rwlock-lease']?.verdict).toBe('ok');
  });

  it.each(SEEDS)(
    'semaphore under client pauses: the resource over capacity, the beliefs ok (seed %i)',
    async (seed) => {
      const { results } = await run(
        { ...base, workload: 'semaphore', fault: 'pause-client', seed },
        on(backend),
      );
      expect(results.checkers.semaphore?.verdict).toBe('illegal');
      expect(results.checkers['semaphore-lease']?.verdict).toBe('ok');
    },
  );

  it.each(SEEDS)('both under kill: ok (seed %i)', async (seed) => {
    for (const workload of ['semaphore', 'rwlock'] as const) {
      const { run: r, results } = await run({ ...base, workload, fault: 'kill', seed }, on(backend));
      expect(r.meta.faultsApplied.some((f) => f.applied)).toBe(true);
      expect(results.verdict, `${workload} seed ${seed}`).toBe('ok');
    }
  });
});
