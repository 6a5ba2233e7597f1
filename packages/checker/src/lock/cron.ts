import type { HistoryEvent } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import type { ClientId, RunEvent } from './events.js';
import { acceptedOf, clientOf, resourceEvents, resourceKey } from './resource-log.js';

/** One tick of one job that ran more than once. */
export interface DuplicateRun {
  kind: 'duplicate-run';
  key: string;
  message: string;
  job: string;
  tick: string;
  /** How many times it ran (≥ 2), by whom, with which fences, at which history indices. */
  runs: number;
  clients: ClientId[];
  fences: (string | undefined)[];
  indices: number[];
}

export interface CronStats {
  /** Distinct (resource, job, tick) that ran at least once. */
  ticks: number;
  runs: number;
  /** Runs beyond the first of their tick. */
  duplicates: number;
  duplicatesPer1000Ticks: number;
  ticksWithDuplicates: number;
  /** Runs the resource refused (stale fence): they did not execute. */
  refused: number;
  /** Ticks expected but never run, when `expectedTicks` is given. */
  missedTicks?: number;
}

export interface CronOptions extends BudgetOptions {
  /** How many ticks the workload scheduled (per job), to count missed ones. */
  expectedTicks?: number;
}

export type CronResult = CheckResult<DuplicateRun, CronStats>;

const KINDS: ReadonlySet<'run'> = new Set(['run']);

/**
 * A tick's identity. An integer tick — a JSON number, or a string of decimal digits — is its value, so
 * `5`, `"5"` and `"05"` are one tick, and a string keeps ticks past 2^53 exact; any other string is a
 * label compared as written. A number that is not a safe integer is refused, as fences are: JSON
 * parsing has already rounded it, so two different ticks could look the same.
 */
function tickOf(event: RunEvent): string {
  const raw: unknown = event.value.tick;
  if (typeof raw === 'bigint') return raw.toString();
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return String(raw);
  if (typeof raw === 'string') return /^-?\d+$/.test(raw) ? BigInt(raw).toString() : raw;
  throw new LockHistoryError(
    event.index,
    '"value.tick" as a safe integer or a string (a decimal string past 2^53) on a resource "run"',
    raw,
  );
}

/** The job a run belongs to: a missing `job` and `""` are both the default job. */
function jobOf(event: RunEvent): string {
  const raw: unknown = event.value.job;
  if (raw === undefined || raw === null) return '';
  if (typeof raw === 'string') return raw;
  throw new LockHistoryError(event.index, '"value.job" as a string on a resource "run"', raw);
}

/**
 * Duplicate executions of a scheduled job: each (job, tick) must run at most once. A refused run did
 * not execute and does not count. Reports duplicates per 1 000 ticks, the figure cron dedup is judged by.
 */
export function checkCron(history: Iterable<HistoryEvent>, options: CronOptions = {}): CronResult {
  const byTick = new Map<string, Omit<DuplicateRun, 'kind' | 'message'>>();
  const stats: CronStats = {
    ticks: 0,
    runs: 0,
    duplicates: 0,
    duplicatesPer1000Ticks: 0,
    ticksWithDuplicates: 0,
    refused: 0,
  };
  for (const event of resourceEvents(history, KINDS, new StepBudget(options.deadline))) {
    if (!acceptedOf(event, true)) {
      stats.refused++;
      continue;
    }
    stats.runs++;
    const key = resourceKey(event);
    const job = jobOf(event);
    const tick = tickOf(event);
    const id = JSON.stringify([key, job, tick]);
    let run = byTick.get(id);
    if (run === undefined) {
      run = { key, job, tick, runs: 0, clients: [], fences: [], indices: [] };
      byTick.set(id, run);
    }
    run.runs++;
    run.clients.push(clientOf(event));
    const fence = event.value.fence;
    run.fences.push(fence === undefined || fence === null ? undefined : String(fence));
    run.indices.push(event.index);
  }
  if (stats.runs + stats.refused === 0) return nothingToCheck('no resource "run" lines', stats);
  const violations: DuplicateRun[] = [];
  for (const run of byTick.values()) {
    if (run.runs < 2) continue;
    stats.duplicates += run.runs - 1;
    const by = run.clients.map(
      (c, i) => `client ${c}${run.fences[i] === undefined ? '' : ` (fence ${run.fences[i]})`}`,
    );
    const what = run.job === '' ? `tick ${run.tick}` : `job ${run.job} tick ${run.tick}`;
    violations.push({
      kind: 'duplicate-run',
      message: `${what} ran ${run.runs} times: ${by.join(', ')}`,
      ...run,
    });
  }
  stats.ticks = byTick.size;
  stats.ticksWithDuplicates = violations.length;
  stats.duplicatesPer1000Ticks = stats.ticks === 0 ? 0 : (stats.duplicates * 1000) / stats.ticks;
  if (options.expectedTicks !== undefined) {
    const jobs = new Set([...byTick.values()].map((r) => `${r.key}\u0000${r.job}`)).size || 1;
    stats.missedTicks = Math.max(0, options.expectedTicks * jobs - stats.ticks);
  }
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats };
}
