import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { reportsDir, run } from './support/runs.js';

/**
 * Kleppmann's second diagram on five real redis-servers: the holder took n1–n3 while n4, n5 were
 * frozen; n3's clock jumps past the TTL while the holder's grant is young, the freeze turns, and another
 * client takes n3–n5. Two holders at once: the inventory loses an update. The script repeats through
 * the run; each repetition convicts only if a second client gets its quorum while the first is still
 * in its window, which on a loaded two-core machine is not every time, so the run is 20 s long.
 */
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('Redlock under the scripted clock jump', () => {
  // Up to three seeds, stopping at the first conviction: one run is not yet deterministic (after the
  // network turns, the other clients' quorum attempts sometimes time out instead of winning n3–n5;
  // see the issue notes), and a single unlucky run must not read as "Redlock is safe" nor fail CI.
  it('is convicted', async () => {
    const verdicts: string[] = [];
    for (const seed of [1, 2, 3]) {
      const { run: r, results } = await run({
        backend: 'redlock',
        workload: 'inventory',
        scenario: 'clock-jump',
        fencing: false,
        clients: 4,
        time: '20s',
        seed,
        out,
      });
      expect(r.meta.faultsApplied.some((f) => f.applied && f.fault === 'clock-jump')).toBe(true);
      verdicts.push(results.verdict);
      if (results.verdict === 'illegal') break;
    }
    expect(verdicts).toContain('illegal');
  }, 240_000);
});
