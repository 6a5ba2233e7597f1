import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBackend } from '../backends/index.js';
import type { BackendName, Deployment, Provider } from '../backends/types.js';
import { FAULT_NAMES } from '../nemesis/faults.js';
import { parseRunOptions } from '../run/options.js';
import type { ProgressSink } from '../run/progress.js';
import { resolveProvider } from '../run/provider.js';
import { type RunSummary, runOnce } from '../run/run.js';
import { MUTANT_ENV, type MutantSpec } from './mutants-module.js';
import type { BaselineRow, MutantRow } from './table.js';

export interface MutationOptions {
  /** Seeds 1..seeds per mutant, until the first conviction. */
  seeds: number;
  /** Harness time (run phases) a mutant may take before it counts as not convicted. */
  budgetMs: number;
  /** Run length per seed unless the mutant sets its own. */
  timeMs: number;
  out: string;
  provider: 'auto' | Provider;
  sink: ProgressSink;
  signal?: AbortSignal;
}

export interface MutationOutcome {
  rows: MutantRow[];
  baselines: BaselineRow[];
}

/** What one run said: the checkers that convicted, and the harness time it took to say so. */
interface Judged {
  convictedBy: string[];
  harnessMs: number;
  verdict: string;
}

/** How a mutant's exposure reads in the tables: workload · faults · fencing. */
export function settingOf(mutant: MutantSpec): string {
  const { workload, faults, fencing, clients, ttlMs, sessionMs, abortRate } = mutant.exposure;
  const extra = [
    abortRate ? `abort rate ${abortRate}` : '',
    clients ? `${clients} clients` : '',
    ttlMs ? `TTL ${ttlMs} ms` : '',
    sessionMs ? `session ${sessionMs} ms` : '',
  ].filter(Boolean);
  return [
    workload,
    faults.length > 0 ? faults.join('+') : 'no fault',
    `fencing ${fencing ? 'on' : 'off'}`,
    ...extra,
  ].join(' · ');
}

/** The faults a mutant names that this harness does not have (yet): such a mutant cannot be run. */
export function missingFaults(mutant: MutantSpec): string[] {
  return mutant.exposure.faults.filter((f) => !(FAULT_NAMES as readonly string[]).includes(f));
}

/**
 * Runs each mutant under its exposing faults, seeds 1..N, until the first conviction or the budget,
 * then the unmutated adapter under each distinct setting for as many seeds as its mutants took, so a
 * conviction can be told from a run that convicts any adapter. One deployment per backend.
 */
export async function measureMutants(
  mutants: readonly MutantSpec[],
  options: MutationOptions,
): Promise<MutationOutcome> {
  const provider = await resolveProvider(options.provider);
  const say = (line: string) => options.sink.line(`mutants: ${line}`);
  const rows: MutantRow[] = [];
  const baselines: BaselineRow[] = [];
  for (const backend of [...new Set(mutants.map((m) => m.backend))]) {
    const mine = mutants.filter((m) => m.backend === backend);
    let deployment: Deployment | undefined;
    try {
      const factory = await loadBackend(backend as BackendName);
      await factory.preflight(provider);
      say(`deploying ${backend} (${provider}) for ${mine.length} mutants`);
      deployment = await factory.deploy({ provider, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      const note = `${backend} unavailable: ${(error as Error).message}`;
      say(note);
      for (const m of mine) rows.push(notRun(m, note));
      continue;
    }
    try {
      const settings = new Map<string, MutantSpec>();
      for (const mutant of mine) {
        if (options.signal?.aborted) break;
        const row = await measureOne(mutant, deployment, provider, options, say);
        rows.push(row);
        if (row.seedsTried > 0 && !settings.has(row.setting)) settings.set(row.setting, mutant);
      }
      // Every seed a mutant could have used, even where it was convicted at the first: a setting that
      // convicts the unmutated adapter now and then (a tight liveness bound after a restart) must show.
      for (const [setting, mutant] of settings) {
        if (options.signal?.aborted) break;
        baselines.push(
          await measureBaseline(mutant, setting, options.seeds, deployment, provider, options, say),
        );
      }
    } finally {
      await deployment.faults.heal().catch(() => undefined);
      await deployment.close().catch(() => undefined);
    }
  }
  return { rows, baselines };
}

function notRun(mutant: MutantSpec, note: string): MutantRow {
  const { name, backend, checkers } = mutant;
  return {
    mutant: name,
    backend,
    setting: settingOf(mutant),
    expected: checkers,
    convictedBy: [],
    seedsTried: 0,
    harnessMs: 0,
    note,
  };
}

async function measureOne(
  mutant: MutantSpec,
  deployment: Deployment,
  provider: Provider,
  options: MutationOptions,
  say: (line: string) => void,
): Promise<MutantRow> {
  const missing = missingFaults(mutant);
  if (missing.length > 0) return notRun(mutant, `fault ${missing.join(', ')} not in this harness`);
  const row: MutantRow = { ...notRun(mutant, ''), note: undefined };
  const verdicts: string[] = [];
  for (let seed = 1; seed <= options.seeds && row.harnessMs < options.budgetMs; seed++) {
    if (options.signal?.aborted) break;
    row.seedsTried = seed;
    let judged: Judged;
    try {
      judged = await runSeed(mutant, seed, mutant.name, deployment, provider, options);
    } catch (error) {
      row.note = `seed ${seed} failed: ${(error as Error).message.split('\n')[0]}`;
      break;
    }
    verdicts.push(judged.verdict);
    row.harnessMs += judged.harnessMs;
    if (judged.convictedBy.length > 0) {
      row.convictedBy = judged.convictedBy;
      break;
    }
  }
  const unknown = verdicts.filter((v) => v === 'unknown').length;
  if (row.convictedBy.length === 0 && row.note === undefined && unknown > 0)
    row.note = `${unknown} runs unknown`;
  say(
    `${mutant.name}: ${row.convictedBy.length > 0 ? `convicted by ${row.convictedBy.join(', ')}` : 'not convicted'} after ${row.seedsTried} seeds, ${(row.harnessMs / 1_000).toFixed(1)} s of harness time${row.note ? ` (${row.note})` : ''}`,
  );
  return row;
}

async function measureBaseline(
  mutant: MutantSpec,
  setting: string,
  seeds: number,
  deployment: Deployment,
  provider: Provider,
  options: MutationOptions,
  say: (line: string) => void,
): Promise<BaselineRow> {
  const row: BaselineRow = {
    backend: mutant.backend,
    setting,
    seedsTried: 0,
    convictions: 0,
    convictedBy: [],
    harnessMs: 0,
  };
  const by = new Set<string>();
  for (let seed = 1; seed <= seeds; seed++) {
    if (options.signal?.aborted) break;
    row.seedsTried = seed;
    try {
      const judged = await runSeed(mutant, seed, undefined, deployment, provider, options);
      row.harnessMs += judged.harnessMs;
      if (judged.convictedBy.length > 0) row.convictions += 1;
      for (const c of judged.convictedBy) by.add(c);
    } catch (error) {
      row.note = `seed ${seed} failed: ${(error as Error).message.split('\n')[0]}`;
      break;
    }
  }
  row.convictedBy = [...by];
  say(
    `unmutated ${mutant.backend} (${setting}): ${row.convictions} of ${row.seedsTried} seeds convicted${row.note ? ` (${row.note})` : ''}`,
  );
  return row;
}

/** One run of `mutant`'s exposure with `seed`; the mutant installed in the clients when `installed` names it. */
async function runSeed(
  mutant: MutantSpec,
  seed: number,
  installed: string | undefined,
  deployment: Deployment,
  provider: Provider,
  options: MutationOptions,
): Promise<Judged> {
  const { exposure } = mutant;
  const runOptions = parseRunOptions({
    backend: mutant.backend as BackendName,
    workload: exposure.workload as never,
    fault: exposure.faults.join(','),
    fencing: exposure.fencing,
    seed,
    time: exposure.timeMs ?? options.timeMs,
    ...(exposure.ttlMs ? { ttl: exposure.ttlMs } : {}),
    ...(exposure.sessionMs ? { session: exposure.sessionMs } : {}),
    ...(exposure.clients ? { clients: exposure.clients } : {}),
    ...(exposure.abortRate ? { abortRate: exposure.abortRate } : {}),
    provider,
    out: options.out,
  });
  // Client processes inherit the environment: this is how they learn which mutant to install.
  if (installed === undefined) delete process.env[MUTANT_ENV];
  else process.env[MUTANT_ENV] = installed;
  let run: RunSummary;
  try {
    run = await runOnce(runOptions, {
      deployment,
      sink: options.sink,
      // A seed whose schedule leaves no slot for one of the exposing faults runs long enough for one, as
      // the suite's cells do (#20 refuses too-short runs): without it `suspend` never ran at 10 s.
      lengthenForFaults: true,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } finally {
    delete process.env[MUTANT_ENV];
  }
  recordMutant(run.dir, installed === undefined ? null : mutant);
  return judged(run);
}

/** Beside the run's own files: which mutant (or none) its clients ran, for whoever reads the report later. */
export function recordMutant(dir: string, mutant: MutantSpec | null): void {
  const record =
    mutant === null
      ? { mutant: null }
      : { mutant: mutant.name, backend: mutant.backend, breaks: mutant.breaks, expected: mutant.checkers };
  writeFileSync(join(dir, 'mutant.json'), `${JSON.stringify(record, null, 2)}\n`);
}

/** Which checkers convicted a stored run, and the harness time to its first violation. */
export function judged(run: RunSummary): Judged {
  const results = JSON.parse(readFileSync(join(run.dir, 'results.json'), 'utf8')) as {
    checkers?: Record<string, { verdict: string }>;
    summary?: { firstViolationMs?: number | null };
  };
  const convictedBy = Object.entries(results.checkers ?? {})
    .filter(([, report]) => report.verdict === 'illegal')
    .map(([name]) => name);
  const first = results.summary?.firstViolationMs;
  const harnessMs = convictedBy.length > 0 && typeof first === 'number' ? first : run.meta.elapsedMs;
  return { convictedBy, harnessMs, verdict: run.verdict };
}
