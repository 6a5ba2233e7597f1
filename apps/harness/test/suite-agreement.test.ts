import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/run/run.js';
import { agreesWithPrediction } from '../src/suite/agreement.js';
import type { SuiteEntry } from '../src/suite/matrix.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function runWith(
  verdict: RunSummary['verdict'],
  checkers: Record<string, { verdict: string }> | null,
): RunSummary {
  const dir = mkdtempSync(join(tmpdir(), 'fk-agree-'));
  dirs.push(dir);
  if (checkers !== null) writeFileSync(join(dir, 'results.json'), JSON.stringify({ verdict, checkers }));
  return { id: 'r', dir, verdict, meta: {} as RunSummary['meta'] };
}

const entry = (expect: SuiteEntry['expect']): SuiteEntry => ({
  options: { backend: 'redis-sentinel-epoch', workload: 'inventory', fault: 'failover-lagged,split-brain' },
  expect,
  why: 'test',
});

describe('agreesWithPrediction', () => {
  it('compares verdict predictions with the verdict, and a report always agrees', () => {
    expect(agreesWithPrediction(entry('illegal'), runWith('illegal', {}))).toBe(true);
    expect(agreesWithPrediction(entry('ok'), runWith('illegal', {}))).toBe(false);
    expect(agreesWithPrediction(entry('report'), runWith('unknown', null))).toBe(true);
  });

  it('fences-ok: a run convicted by the lease check (two holders) agrees while the fences check is ok', () => {
    const run = runWith('illegal', { lease: { verdict: 'illegal' }, fences: { verdict: 'ok' } });
    expect(agreesWithPrediction(entry('fences-ok'), run)).toBe(true);
  });

  it('fences-ok: a fence granted twice or a stale write accepted disagrees', () => {
    const run = runWith('illegal', { lease: { verdict: 'ok' }, fences: { verdict: 'illegal' } });
    expect(agreesWithPrediction(entry('fences-ok'), run)).toBe(false);
  });

  it('fences-ok: a fault never applied or an incomplete history cannot show it', () => {
    const missed = runWith('unknown', { fences: { verdict: 'ok' }, 'fault-effects': { verdict: 'unknown' } });
    expect(agreesWithPrediction(entry('fences-ok'), missed)).toBe(false);
    const partial = runWith('unknown', { fences: { verdict: 'ok' }, completeness: { verdict: 'unknown' } });
    expect(agreesWithPrediction(entry('fences-ok'), partial)).toBe(false);
  });

  it('fences-ok: a run with no results.json or no fences check disagrees', () => {
    expect(agreesWithPrediction(entry('fences-ok'), runWith('unknown', null))).toBe(false);
    expect(agreesWithPrediction(entry('fences-ok'), runWith('ok', { lease: { verdict: 'ok' } }))).toBe(false);
  });
});
