import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { reportsDir, run } from './support/runs.js';

/**
 * Kleppmann's second diagram on five real redis-servers, scripted step by step on observed events
 * (see the clock-jump scenario): the holder is granted n1–n3 while n4, n5 are unreachable and is
 * stopped between its check and its write; n3's clock jumps past the TTL and the network turns; a
 * second client is granted n3–n5 while the holder's grant is still valid by its own reckoning; the
 * holder resumes and writes. Every seed must convict: the script leaves nothing to luck.
 */
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('Redlock under the scripted clock jump', () => {
  for (const seed of [1, 2, 3]) {
    it(`is convicted (seed ${seed})`, async () => {
      const { run: r, results } = await run({
        backend: 'redlock',
        workload: 'inventory',
        scenario: 'clock-jump',
        fencing: false,
        clients: 4,
        // One pass of the script takes 1.5–2.5 TTLs (2 s each here) after a 1 s quiet start; 10 s leave
        // a fault phase of 6 s, so a slow pass still ends inside it.
        time: '10s',
        seed,
        out,
      });
      const passes = r.meta.faultsApplied.filter((f) => f.fault === 'clock-jump' && f.applied);
      expect(passes.length, JSON.stringify(r.meta.faultsApplied)).toBeGreaterThan(0);
      // The second grant came while the holder's grant was valid: the clock jump convicts, not a pause.
      expect(passes.some((f) => f.evidence?.holderGrantValid === true)).toBe(true);
      // #20: each pass's jump was seen on n3's own clock (Redis TIME), and seen gone after its heal.
      for (const pass of passes) {
        expect(pass.observed?.started?.seen, JSON.stringify(pass)).toBe(true);
        expect(pass.observed?.healed?.seen, JSON.stringify(pass)).toBe(true);
      }
      expect(results.verdict).toBe('illegal');
    }, 60_000);
  }
});
