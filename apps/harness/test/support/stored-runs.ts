import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunMeta, RunResults } from '../../src/run/output.js';

/** A run.json as `writeRun` stores it, with `fields` over the defaults. */
export function runMeta(id: string, fields: Partial<RunMeta> = {}): RunMeta {
  return {
    id,
    startedAt: '2026-12-03T07:00:00.000Z',
    backend: 'memory',
    workload: 'inventory',
    faults: [],
    scenario: null,
    fencing: true,
    safeFences: true,
    provider: 'local',
    clients: 3,
    seed: 1,
    durationMs: 1_000,
    startedAtNs: 1_000,
    elapsedMs: 1_000,
    ttlMs: 1_000,
    windowMs: 30,
    stock: 100,
    tickMs: 100,
    nodes: [],
    faultsApplied: [],
    problems: [],
    ...fields,
  };
}

/** A results.json as `judgeRun` stores it, with `fields` over the defaults. */
export function runResults(id: string, fields: Partial<RunResults> = {}): RunResults {
  return {
    id,
    checkedAt: '2026-12-03T07:00:01.000Z',
    verdict: 'ok',
    problems: [],
    checkers: {},
    summary: {
      operations: 0,
      ok: 0,
      fail: 0,
      info: 0,
      opsPerSecond: 0,
      faultsApplied: 0,
      faultsFailed: 0,
      firstViolationMs: null,
    },
    ...fields,
  };
}

/** Writes a run directory by hand: run.json, results.json and history.jsonl, each given as text or value. */
export function storeRun(
  root: string,
  id: string,
  files: { meta: unknown; results?: unknown; history?: string },
): string {
  const dir = join(root, id);
  mkdirSync(dir, { recursive: true });
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  writeFileSync(join(dir, 'run.json'), text(files.meta));
  if (files.results !== undefined) writeFileSync(join(dir, 'results.json'), text(files.results));
  writeFileSync(join(dir, 'history.jsonl'), files.history ?? '');
  return dir;
}
