import { resolve } from 'node:path';
import { OptionsError, parseDuration } from '../run/options.js';
import type { ProgressSink } from '../run/progress.js';
import type { RunSummary } from '../run/run.js';
import { parseProvider, parseSeeds } from '../suite/matrix.js';
import { measureMutants, recordMutant } from './measure.js';
import { loadMutants, MUTANT_ENV } from './mutants-module.js';
import { mutantForRun, selectMutants } from './select.js';
import { attributable, mutationTable } from './table.js';

/**
 * A mutant is installed only when a command asks for one (`run --mutant`, `mutants`), never because a
 * variable was left in the shell: the CLI drops an inherited `MUTANT_ENV` before any command runs.
 */
export function ignoreInheritedMutant(): void {
  delete process.env[MUTANT_ENV];
}

/**
 * `fencekit run --mutant NAME`: the run's client processes install the mutant (they inherit
 * `MUTANT_ENV`), and the run directory says which one it was.
 */
export async function runWithMutant(
  name: string,
  backend: string,
  run: () => Promise<RunSummary>,
): Promise<RunSummary> {
  const mutant = mutantForRun((await loadMutants()).MUTANTS, name, backend);
  process.env[MUTANT_ENV] = mutant.name;
  try {
    const summary = await run();
    recordMutant(summary.dir, mutant);
    return summary;
  } finally {
    delete process.env[MUTANT_ENV];
  }
}

export interface MutantsCommandOptions {
  seeds: string;
  budget: string;
  time: string;
  only?: string;
  backends?: string;
  provider: string;
  out: string;
}

/** `fencekit mutants`: measures the selection and prints the mutation table. */
export async function mutantsCommand(
  o: MutantsCommandOptions,
  hooks: { signal: AbortSignal; sink: ProgressSink; write: (text: string) => void },
): Promise<void> {
  // The suite's validation: decimal digits only (`Number` took "0x3" and "1e2").
  const seeds = parseSeeds(o.seeds) as number;
  let budgetMs: number;
  let timeMs: number;
  try {
    budgetMs = parseDuration(o.budget);
    timeMs = parseDuration(o.time);
  } catch (error) {
    throw new OptionsError((error as Error).message);
  }
  parseProvider(o.provider);
  const mutants = selectMutants((await loadMutants()).MUTANTS, {
    ...(o.only ? { only: o.only } : {}),
    ...(o.backends ? { backends: o.backends } : {}),
  });
  const started = performance.now();
  const outcome = await measureMutants(mutants, {
    seeds,
    budgetMs,
    timeMs,
    out: o.out,
    provider: o.provider as 'auto',
    sink: hooks.sink,
    signal: hooks.signal,
  });
  const minutes = ((performance.now() - started) / 60_000).toFixed(1);
  hooks.write(`\n${mutationTable(outcome.rows, outcome.baselines)}`);
  const convicted = outcome.rows.filter((r) => attributable(r, outcome.baselines).length > 0).length;
  const dirty = outcome.baselines.filter((b) => b.convictions > 0).length;
  hooks.write(
    `\n${convicted} of ${outcome.rows.length} mutants convicted by a checker the unmutated adapter passed; ${dirty} of ${outcome.baselines.length} unmutated settings convicted; ${minutes} min. Runs: ${resolve(o.out)}\n`,
  );
}
