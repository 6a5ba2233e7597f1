import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadBackend } from '../backends/index.js';
import type { BackendFactory, Deployment, Provider } from '../backends/types.js';
import { recoveryPhaseMs } from '../check/checkers.js';
import { HistoryCollector } from '../history/collector.js';
import type { FaultWindowSummary } from '../nemesis/nemesis.js';
import { unscheduledFaults } from '../nemesis/schedule.js';
import { validateRun } from './compatibility.js';
import { OptionsError, type ParsedRunOptions } from './options.js';
import { consoleProgress, linesTo, type ProgressSink } from './progress.js';
import { resolveProvider } from './provider.js';
import { runSettings, type ScenarioSettings } from './scenario-settings.js';

export interface RunHooks {
  /** A deployment to reuse (the suite shares one per backend); otherwise one is started and closed. */
  deployment?: Deployment;
  /** Ctrl-C: heal, stop clients, tear down, and keep what was recorded (judged at best `unknown`). */
  signal?: AbortSignal;
  /** Log lines only (tests): the status comes as a plain line every 2 s. */
  progress?: (line: string) => void;
  /** Lines and live status (the CLI: a bar on a terminal); default: stderr. */
  sink?: ProgressSink;
  /** This run's place in a suite, shown with its status. */
  position?: { index: number; total: number };
  /**
   * A run too short for a slot of each of its faults is lengthened to the shortest that has one (the suite's
   * cells, whose seed sets the schedule), instead of refused.
   */
  lengthenForFaults?: boolean;
}

/**
 * One run as its phases share it (see run.ts): what was decided before anything started, then what
 * each phase adds (the deployment, the processes, the faults applied, the times).
 */
export interface Run {
  readonly options: ParsedRunOptions;
  readonly hooks: RunHooks;
  readonly factory: BackendFactory;
  readonly scripted: ScenarioSettings;
  readonly ttlMs: number;
  /** See `NemesisContext.sessionMs`. */
  readonly sessionMs: number;
  /** The resource checks fences: only where the workload writes under a lock with fences. */
  readonly fencing: boolean;
  readonly provider: Provider;
  readonly id: string;
  /** `<out>/<id>`: the run's report. */
  readonly dir: string;
  /** A temporary directory for the resource's socket and database, removed at the end. */
  readonly work: string;
  readonly sink: ProgressSink;
  readonly collector: HistoryCollector;
  /** Aborted on the caller's signal (Ctrl-C): every phase ends early, the history is kept. */
  readonly abort: AbortController;
  readonly startedIso: string;
  /** The phase now, for the status line. */
  phase: string;
  deployment: Deployment | undefined;
  /** Every process forked for the run, killed at the end whatever happened. */
  readonly children: ChildProcess[];
  faultsApplied: FaultWindowSummary[];
  /** When the clients were told to go: `performance.now()` and the history's clock (ns). */
  startedAt?: number;
  startedAtNs?: number;
  elapsedMs: number;
}

/** Decides everything a run needs before it starts anything; refuses a combination that means nothing. */
export async function newRun(asked: ParsedRunOptions, hooks: RunHooks): Promise<Run> {
  let options = asked;
  const factory = await loadBackend(options.backend);
  const scripted = runSettings(options.scenario, options.fault);
  const ttlMs = options.ttl ?? scripted.ttlMs ?? factory.defaultTtlMs;
  validateRun(options, factory);
  const sessionMs = options.session ?? factory.sessionMs?.(ttlMs) ?? ttlMs;
  const enoughMs = refuseTooShort(options, ttlMs, sessionMs, hooks.lengthenForFaults === true);
  if (enoughMs !== undefined) options = { ...options, time: enoughMs };
  // The embedded backend runs no servers, so it has no provider to choose.
  const provider: Provider =
    hooks.deployment?.provider ??
    (factory.name === 'memory' ? 'local' : await resolveProvider(options.provider));
  const id = runId(options);
  const dir = resolve(options.out, id);
  mkdirSync(dir, { recursive: true });
  return {
    options,
    hooks,
    factory,
    scripted,
    ttlMs,
    sessionMs,
    fencing:
      options.fencing && factory.safeFences && options.workload !== 'cron' && options.workload !== 'cas',
    provider,
    id,
    dir,
    work: mkdtempSync(join(tmpdir(), 'fencekit-run-')),
    sink: hooks.sink ?? (hooks.progress ? linesTo(hooks.progress) : consoleProgress()),
    collector: new HistoryCollector(),
    abort: new AbortController(),
    startedIso: new Date().toISOString(),
    phase: 'deploy',
    deployment: hooks.deployment,
    children: [],
    faultsApplied: [],
    elapsedMs: 0,
  };
}

/** A run too short for a slot of each of its faults would be labelled with faults it never had (#20): refused. */
function refuseTooShort(
  options: ParsedRunOptions,
  ttlMs: number,
  sessionMs: number,
  lengthen: boolean,
): number | undefined {
  if (options.scenario || options.fault.length === 0) return undefined;
  const { missing, enoughMs } = unscheduledFaults({
    seed: options.seed,
    faults: options.fault,
    durationMs: options.time,
    ttlMs,
    sessionMs,
    recoveryMs: recoveryPhaseMs(options.backend, ttlMs, options.workload),
  });
  if (missing.length === 0) return undefined;
  if (lengthen && enoughMs !== undefined) return enoughMs;
  throw new OptionsError(
    `--time ${options.time}ms is too short for its faults: no slot for ${missing.join(', ')} (TTL ${ttlMs} ms)${enoughMs ? `; this seed needs at least ${enoughMs / 1_000}s` : ''}`,
  );
}

/** A progress line of this run. */
export function say(run: Run, line: string): void {
  run.sink.line(`[${run.id}] ${line}`);
}

/** Enters a phase: the status line shows it from now on. */
export function enter(run: Run, phase: string, detail: string): void {
  run.phase = phase;
  say(run, `phase=${phase} ${detail}`);
}

function runId(options: ParsedRunOptions): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const faults = options.scenario ? `scenario-${options.scenario}` : options.fault.join('+') || 'none';
  const fencing =
    options.fencing && options.workload !== 'cron' && options.workload !== 'cas' ? 'fenced' : 'unfenced';
  const unique = Math.floor(Math.random() * 0xffff)
    .toString(16)
    .padStart(4, '0');
  return `${stamp}-${options.backend}-${options.workload}-${faults}-${fencing}-s${options.seed}-${unique}`;
}
