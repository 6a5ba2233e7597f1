import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../src/index.js';
import { deploy, inventoryStats, reportsDir, run, stats } from './support/runs.js';

/**
 * Kleppmann's first diagram on a real redis-server: a client frozen (SIGSTOP) between its lease check
 * and its write, for twice the TTL. Without fencing the resource takes the stale write; with fencing it
 * refuses it.
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
const base = { backend: 'redis' as const, workload: 'inventory' as const, clients: 4, time: '6s', out };
const SEEDS = [1, 2, 3, 4, 5];

describe('single Redis under client pauses', () => {
  it('without fencing is convicted in at least 95 % of seeded runs', async () => {
    const verdicts: string[] = [];
    for (const seed of SEEDS) {
      const { results } = await run({ ...base, scenario: 'gc-pause', fencing: false, seed }, redis);
      verdicts.push(results.verdict);
    }
    const convicted = verdicts.filter((v) => v === 'illegal').length;
    expect(convicted / SEEDS.length, `verdicts: ${verdicts.join(', ')}`).toBeGreaterThanOrEqual(0.95);
  });

  it('with fencing, stale writes are refused and no update is lost', async () => {
    const { results } = await run({ ...base, scenario: 'gc-pause', seed: 1 }, redis);
    expect(results.verdict).toBe('ok');
    expect(stats(results, 'fences').staleRefused).toBeGreaterThan(0);
    const inventory = inventoryStats(results);
    expect(inventory.decrements).toBeGreaterThanOrEqual(inventory.acknowledged);
    expect(inventory.decrements).toBeLessThanOrEqual(inventory.acknowledged + inventory.indeterminate);
  });

  it('cron reports its duplicate rate under client pauses and a clock jump', async () => {
    const { results } = await run(
      { ...base, workload: 'cron', fault: 'pause-client,clock-jump', seed: 1 },
      redis,
    );
    const cron = stats(results, 'cron');
    expect(cron.ticks).toBeGreaterThan(10);
    expect(typeof cron.duplicatesPer1000Ticks).toBe('number');
  });
});
