import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InventoryStats } from '@fencekit/checker';
import {
  type Deployment,
  loadBackend,
  parseRunOptions,
  type RunOptionsInput,
  type RunResults,
  type RunSummary,
  runOnce,
} from '../../src/index.js';

/** A fresh reports directory per test file. */
export function reportsDir(): string {
  return mkdtempSync(join(tmpdir(), 'fencekit-reports-'));
}

export interface FinishedRun {
  run: RunSummary;
  results: RunResults;
}

/** Runs one configuration quietly (progress kept for the failure message) and reads its results. */
export async function run(input: RunOptionsInput, deployment?: Deployment): Promise<FinishedRun> {
  const lines: string[] = [];
  const run = await runOnce(parseRunOptions({ provider: 'local', ...input }), {
    progress: (line) => lines.push(line),
    ...(deployment ? { deployment } : {}),
  });
  const results = JSON.parse(readFileSync(join(run.dir, 'results.json'), 'utf8')) as RunResults;
  return { run, results };
}

/** A checker's stats, typed loosely for assertions. */
export function stats(results: RunResults, checker: string): Record<string, unknown> {
  const c = results.checkers[checker];
  if (!c) throw new Error(`no ${checker} checker in ${JSON.stringify(Object.keys(results.checkers))}`);
  return c.stats as Record<string, unknown>;
}

/** Inventory stats for the single resource ('' key). */
export function inventoryStats(results: RunResults): InventoryStats {
  return (stats(results, 'inventory') as Record<string, InventoryStats>)['']!;
}

/** Starts a backend's servers (local provider) once for the runs of a test file. */
export async function deploy(backend: RunOptionsInput['backend']): Promise<Deployment> {
  const factory = await loadBackend(backend);
  await factory.preflight('local');
  return factory.deploy({ provider: 'local' });
}
