import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { inventoryStats, reportsDir, run, stats } from './support/runs.js';

/**
 * The embedded backend, end to end with real processes (lock server, resource, clients) and real
 * SIGSTOP pauses: no external servers, so these pass on any machine.
 */
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));
const base = { backend: 'memory' as const, clients: 4, time: '6s', out };

describe('memory backend', () => {
  it('without fencing, a client paused past its TTL writes stale: convicted', async () => {
    const { run: r, results } = await run({
      ...base,
      workload: 'inventory',
      scenario: 'gc-pause',
      fencing: false,
      seed: 1,
    });
    expect(results.problems).toEqual([]);
    expect(r.meta.faultsApplied.some((f) => f.applied)).toBe(true);
    expect(results.verdict).toBe('illegal');
    expect(results.checkers.fences?.verdict).toBe('illegal');
  });

  it('with fencing, the stale writes are refused and nothing is lost', async () => {
    const { results } = await run({ ...base, workload: 'inventory', scenario: 'gc-pause', seed: 1 });
    expect(results.verdict).toBe('ok');
    expect(stats(results, 'fences').staleRefused).toBeGreaterThan(0);
    const inventory = inventoryStats(results);
    expect(inventory.writesRefused).toBeGreaterThan(0);
    expect(inventory.decrements).toBe(inventory.acknowledged);
  });

  it('mutex without fencing under client pauses shows overlapping holders', async () => {
    const { results } = await run({
      ...base,
      workload: 'mutex',
      fault: 'pause-client',
      fencing: false,
      seed: 2,
    });
    expect(results.verdict).toBe('illegal');
    expect(results.checkers.mutex?.verdict).toBe('illegal');
  });

  it('the lock-free cas baseline loses nothing under client pauses', async () => {
    const { results } = await run({ ...base, workload: 'cas', fault: 'pause-client', seed: 3 });
    expect(results.verdict).toBe('ok');
    expect(inventoryStats(results).writesRefused).toBeGreaterThan(0);
  });

  it('election with fenced claims stays ok under client pauses', async () => {
    const { results } = await run({ ...base, workload: 'election', fault: 'pause-client', seed: 4 });
    expect(results.verdict).toBe('ok');
    expect(stats(results, 'election').claims).toBeGreaterThan(0);
  });

  it('cron reports its duplicate rate per 1 000 ticks', async () => {
    const { results } = await run({ ...base, workload: 'cron', fault: 'pause-client', seed: 5 });
    const cron = stats(results, 'cron');
    expect(cron.ticks).toBeGreaterThan(10);
    expect(typeof cron.duplicatesPer1000Ticks).toBe('number');
    // Late workers fire the ticks they missed after those ticks' locks expired.
    expect(cron.duplicates).toBeGreaterThan(0);
  });

  it('without faults, fenced inventory is ok', async () => {
    const { results } = await run({ ...base, workload: 'inventory', fault: 'none', seed: 6, time: '2s' });
    expect(results.verdict).toBe('ok');
    expect(inventoryStats(results).acknowledged).toBeGreaterThan(10);
  });
});
