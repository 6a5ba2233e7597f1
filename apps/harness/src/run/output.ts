import { join } from 'node:path';
import { formatHistoryEvent, type HistoryEvent, type Verdict } from '@fencekit/checker';
import { type CheckOutcome, checkHistory } from '../check/check.js';
import { withMissedAims } from '../nemesis/aim.js';
import { withCloseLeaks } from '../nemesis/hang-at-close.js';
import type { FaultWindowSummary } from '../nemesis/nemesis.js';
import { withFaultEffects } from '../nemesis/observation.js';
import { writeRunPage } from '../report/run-page.js';
import { writeOwnFile } from '../report/safe-write.js';
import { writeSiteIndex } from '../report/site.js';
import { violationMarks } from '../report/violations.js';
import type { Warn } from '../report/warnings.js';
import type { WorkloadName } from '../workloads/types.js';

/** Everything about a run except its history: written as run.json so `fencekit check` can re-judge it. */
export interface RunMeta {
  id: string;
  startedAt: string;
  backend: string;
  workload: WorkloadName;
  faults: string[];
  scenario: string | null;
  fencing: boolean;
  safeFences: boolean;
  provider: string;
  /**
   * The servers were someone else's (`--provider external`): only the clients' path was faulted, never the
   * servers. Absent for runs whose servers fencekit ran.
   */
  clientSideOnly?: boolean;
  clients: number;
  seed: number;
  durationMs: number;
  /**
   * When the clients were told to start, on the history's clock (ns): time zero of the run's harness
   * time. Absent in runs recorded before it was kept; the first client or fault event stands in then.
   */
  startedAtNs?: number;
  elapsedMs: number;
  ttlMs: number;
  windowMs: number;
  stock: number;
  tickMs: number;
  nodes: string[];
  faultsApplied: FaultWindowSummary[];
  /** Why the history may be incomplete; a non-empty list keeps the verdict from being `ok`. */
  problems: string[];
}

export interface RunResults extends CheckOutcome {
  id: string;
  checkedAt: string;
  summary: RunFigures;
}

export interface RunFigures {
  operations: number;
  ok: number;
  fail: number;
  info: number;
  opsPerSecond: number;
  faultsApplied: number;
  faultsFailed: number;
  /**
   * Harness time from the run's start (`RunMeta.startedAtNs`) to its first violation: the earliest
   * time the report's timeline places a violation at (an overlap's start, a refused or lost write's
   * event), on the one monotonic clock of the history. null when no checker found a violation.
   */
  firstViolationMs: number | null;
}

/** Writes history.jsonl, run.json, results.json and index.html; refreshes the site index. */
export async function writeRun(
  dir: string,
  meta: RunMeta,
  history: readonly HistoryEvent[],
): Promise<Verdict> {
  writeOwnFile(join(dir, 'history.jsonl'), history.map((e) => `${formatHistoryEvent(e)}\n`).join(''));
  writeOwnFile(join(dir, 'run.json'), `${JSON.stringify(meta, null, 2)}\n`);
  return judgeRun(dir, meta, history);
}

export interface JudgeOptions {
  /**
   * The site index in the parent directory: a run's own reports directory gets one ('create', the
   * default); a re-checked run's parent may be anyone's, so its index is refreshed only if fencekit
   * made it ('if-fencekit').
   */
  siteIndex?: 'create' | 'if-fencekit';
  /** Where stored files skipped and pages left alone are told (default: stderr). */
  warn?: Warn;
}

/** Checks a stored history and writes results.json and the run page. */
export async function judgeRun(
  dir: string,
  meta: RunMeta,
  history: readonly HistoryEvent[],
  options: JudgeOptions = {},
): Promise<Verdict> {
  const checked = await checkHistory(
    {
      workload: meta.workload,
      fenced: meta.safeFences,
      fencing: meta.fencing,
      recoveredAt: recoveredAt(meta),
      initialStock: meta.stock,
      ttlMs: meta.ttlMs,
      backend: meta.backend,
      clients: meta.clients,
    },
    history,
    meta.problems,
  );
  // Faults applied but not seen to take effect (or to end) keep the run from being cleared (#20).
  // A client process that outlived its settled close() (hang-at-close's evidence) convicts the run.
  // A requested fault never applied keeps it from being cleared too (a scenario applies faults of its own),
  // and so does an aimed fault that missed its aim in every window (aim.ts).
  const requested = meta.scenario ? [] : meta.faults;
  const outcome = withCloseLeaks(
    withMissedAims(withFaultEffects(checked, meta.faultsApplied, requested), meta.faultsApplied),
    meta.faultsApplied,
  );
  const results: RunResults = {
    id: meta.id,
    checkedAt: new Date().toISOString(),
    ...outcome,
    summary: { ...figures(meta, history), firstViolationMs: firstViolationMs(meta, outcome, history) },
  };
  writeOwnFile(join(dir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeRunPage(dir, meta, results, history, options.warn);
  writeSiteIndex(join(dir, '..'), {
    mayCreate: options.siteIndex !== 'if-fencekit',
    ...(options.warn ? { warn: options.warn } : {}),
  });
  return outcome.verdict;
}

function figures(meta: RunMeta, history: readonly HistoryEvent[]): Omit<RunFigures, 'firstViolationMs'> {
  const f: Omit<RunFigures, 'firstViolationMs'> = {
    operations: 0,
    ok: 0,
    fail: 0,
    info: 0,
    opsPerSecond: 0,
    faultsApplied: 0,
    faultsFailed: 0,
  };
  for (const e of history) {
    if (typeof e.process !== 'number' || e.type === 'invoke') continue;
    f.operations++;
    f[e.type]++;
  }
  f.opsPerSecond = meta.elapsedMs > 0 ? Math.round((f.operations * 1_000) / meta.elapsedMs) : 0;
  f.faultsApplied = meta.faultsApplied.filter((a) => a.applied).length;
  f.faultsFailed = meta.faultsApplied.length - f.faultsApplied;
  return f;
}

/** See `RunFigures.firstViolationMs`: read where the timeline marks violations, so both agree. */
function firstViolationMs(
  meta: RunMeta,
  outcome: CheckOutcome,
  history: readonly HistoryEvent[],
): number | null {
  if (outcome.verdict !== 'illegal') return null;
  const marks = violationMarks(outcome.checkers, history, meta.clients);
  if (marks.length === 0) return null;
  const first = marks.reduce((min, m) => Math.min(min, m.time), Number.POSITIVE_INFINITY);
  const start = meta.startedAtNs ?? history.find((e) => e.process !== 'resource')?.time ?? first;
  return Math.max(0, Math.round((first - start) / 1e6));
}

/** When each applied fault's heal probe first saw the servers serving again, on the history's clock. */
function recoveredAt(meta: RunMeta): { fault: string; atNs: number }[] {
  const go = meta.startedAtNs;
  if (go === undefined) return [];
  return meta.faultsApplied.flatMap((f) => {
    const healed = f.applied ? f.observed?.healed : undefined;
    return healed?.seen ? [{ fault: String(f.fault), atNs: go + healed.atMs * 1e6 }] : [];
  });
}
