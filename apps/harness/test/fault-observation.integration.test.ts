import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment, RunMeta } from '../src/index.js';
import { recheckRun } from '../src/index.js';
import { deploy, type FinishedRun, reportsDir, run } from './support/runs.js';

/**
 * Every scheduled server fault is probed independently after it starts and after its heal, the run records what the
 * probes saw and when, the page shows it, and a fault applied but never seen to take effect keeps the run from
 * being cleared. Before #20 "observed" was always empty for scheduled faults.
 */
const out = reportsDir();
let redis: Deployment;
let finished: FinishedRun;
beforeAll(async () => {
  redis = await deploy('redis');
  finished = await run(
    {
      backend: 'redis',
      workload: 'inventory',
      fault: 'pause-server,kill,clock-jump,cut-clients,latency',
      clients: 3,
      time: '15s',
      seed: 5,
      out,
    },
    redis,
  );
}, 120_000);
afterAll(async () => {
  await redis?.close();
  rmSync(out, { recursive: true, force: true });
});

describe('scheduled faults are observed by independent probes', () => {
  it('each applied fault was seen to take effect and to end, with when', () => {
    const applied = finished.run.meta.faultsApplied.filter((f) => f.applied);
    expect(applied.length, JSON.stringify(finished.run.meta.faultsApplied)).toBeGreaterThan(1);
    for (const f of applied) {
      const what = JSON.stringify(f);
      expect(f.observed?.started?.seen, what).toBe(true);
      expect(f.observed?.healed?.seen, what).toBe(true);
      expect(f.observed!.healed!.atMs, what).toBeGreaterThanOrEqual(f.observed!.started!.atMs);
      expect(f.observed!.started!.detail, what).not.toBe('');
    }
    expect(finished.results.checkers['fault-effects']).toBeUndefined();
  });

  it('the run page shows applied, observed and the observed window per fault', () => {
    const html = readFileSync(join(finished.run.dir, 'index.html'), 'utf8');
    expect(html).toMatch(/<th>effect observed<\/th><th>observed window<\/th>/);
    const rows = html.match(/<tr data-fault="[^"]+" data-observed="yes">/g) ?? [];
    expect(rows.length).toBe(finished.run.meta.faultsApplied.filter((f) => f.applied).length);
    expect(html).toMatch(/\d+\.\d s – \d+\.\d s/);
  });

  it('a fault applied but not observed makes the verdict at best unknown, and the page says so', async () => {
    const metaPath = join(finished.run.dir, 'run.json');
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as RunMeta;
    const first = meta.faultsApplied.find((f) => f.applied)!;
    first.observed!.started = { seen: false, detail: 'process state S', atMs: first.observed!.started!.atMs };
    writeFileSync(metaPath, JSON.stringify(meta));
    const verdict = await recheckRun(finished.run.dir);
    expect(['unknown', 'illegal']).toContain(verdict);
    if (finished.results.verdict === 'ok') expect(verdict).toBe('unknown');
    const results = JSON.parse(readFileSync(join(finished.run.dir, 'results.json'), 'utf8'));
    expect(results.checkers['fault-effects'].error).toMatch(
      /applied but its effect was not observed \(process state S\)/,
    );
    const html = readFileSync(join(finished.run.dir, 'index.html'), 'utf8');
    expect(html).toMatch(/data-observed="no"/);
  });
});
