import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OptionsError, parseRunOptions, recheckRun } from '../src/index.js';
import { withFaultEffects } from '../src/nemesis/observation.js';
import { faultSchedule, unscheduledFaults } from '../src/nemesis/schedule.js';
import { runOnce } from '../src/run/run.js';

/**
 * #20 finding 2: a run labelled with a fault that never happened was `ok` and counted in that fault's cell
 * (`--fault kill --time 1s` recorded no fault applied; a fault list's seeded picks left some out). Now each listed
 * fault has a slot before any repeats, a run too short for that is refused (exit 64), and a run whose requested
 * fault never applied all the same (its moment never came) is judged at best `unknown`, saying which.
 */
const out = mkdtempSync(join(tmpdir(), 'fencekit-never-applied-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('a requested fault that never applied', () => {
  it('has a slot in the schedule, each listed fault before any repeats', () => {
    const faults = ['kill', 'pause-server', 'stall-holder'] as const;
    // Seed 1, 6 s and a TTL of 400 ms picked pause-server alone on the old schedule.
    const { faults: slots } = faultSchedule({ seed: 1, faults: [...faults], durationMs: 9_000, ttlMs: 400 });
    expect(new Set(slots.slice(0, 3).map((s) => s.fault))).toEqual(new Set(faults));
    const short = unscheduledFaults({ seed: 1, faults: [...faults], durationMs: 6_000, ttlMs: 400 });
    expect(short.missing.length).toBeGreaterThan(0);
    expect(short.enoughMs).toBeGreaterThan(6_000);
  });

  it('refuses a run too short for its faults', async () => {
    const options = parseRunOptions({ backend: 'memory', workload: 'mutex', fault: 'kill', time: '1s', out });
    await expect(runOnce(options, { progress: () => {} })).rejects.toThrow(OptionsError);
    await expect(runOnce(options, { progress: () => {} })).rejects.toThrow(
      /too short for its faults: no slot for kill/,
    );
  });

  it('keeps a run from ok, naming the fault', () => {
    const ok = { verdict: 'ok', checkers: {} } as unknown as Parameters<typeof withFaultEffects>[0];
    const judged = withFaultEffects(
      ok,
      [{ fault: 'kill', target: {}, applied: false }],
      ['kill', 'pause-client'],
    );
    expect(judged.verdict).toBe('unknown');
    expect(judged.checkers['fault-effects']?.error).toMatch(/fault kill requested but never applied/);
    expect(judged.checkers['fault-effects']?.error).toMatch(/fault pause-client requested but never applied/);
  });

  it('is judged unknown when a stored run labelled with it has none applied', async () => {
    // A real run with no fault, then labelled as the old harness recorded `--fault kill --time 1s`: kill asked,
    // nothing applied; re-checked, it is no longer ok.
    const run = await runOnce(
      parseRunOptions({ backend: 'memory', workload: 'mutex', fault: 'none', time: '2s', clients: 2, out }),
      { progress: () => {} },
    );
    expect(run.verdict).toBe('ok');
    const path = join(run.dir, 'run.json');
    const meta = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...meta, faults: ['kill'], faultsApplied: [] }));
    expect(await recheckRun(run.dir, () => {})).toBe('unknown');
    const results = JSON.parse(readFileSync(join(run.dir, 'results.json'), 'utf8'));
    expect(results.checkers['fault-effects'].error).toMatch(/fault kill requested but never applied/);
  }, 120_000);
});
