import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { reportsDir, run } from './support/runs.js';

/**
 * Kleppmann's second diagram on five real redis-servers: the holder took n1–n3 while n4, n5 were cut
 * off; n3's clock jumps past the TTL while the holder's grant is young, the network turns, and another
 * client takes n3–n5. Two holders at once: the inventory loses an update.
 */
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('Redlock under the scripted clock jump', () => {
  it('is convicted', async () => {
    const { run: r, results } = await run({
      backend: 'redlock',
      workload: 'inventory',
      scenario: 'clock-jump',
      fencing: false,
      clients: 4,
      time: '8s',
      seed: 1,
      out,
    });
    expect(r.meta.faultsApplied.some((f) => f.applied && f.fault === 'clock-jump')).toBe(true);
    expect(results.verdict).toBe('illegal');
  });
});
