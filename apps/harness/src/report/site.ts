import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunMeta, RunResults } from '../run/output.js';
import {
  type CellEvidence,
  cellEvidence,
  cellOf,
  describeEvidence,
  FIRST_VIOLATION_MEASURE,
} from '../suite/evidence.js';
import { esc, page, verdictBadge } from './html.js';
import { writeOwnPage } from './ownership.js';
import { readRunMeta, readRunResults, StoredRunError } from './stored-run.js';
import { type ReportWarning, skippedRun, type Warn, warnOnStderr } from './warnings.js';

export interface StoredRun {
  dir: string;
  meta: RunMeta;
  results: RunResults;
}

/**
 * Every run under `root` with both run.json and results.json, each checked for its shape: a run
 * without results.json is not judged yet and left out quietly; a file that cannot be read or is not
 * what fencekit writes is left out with a warning naming it and what was wrong.
 */
export function readStoredRuns(root: string): { runs: StoredRun[]; skipped: ReportWarning[] } {
  const runs: StoredRun[] = [];
  const skipped: ReportWarning[] = [];
  if (!existsSync(root)) return { runs, skipped };
  for (const dir of readdirSync(root, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    const metaPath = join(root, dir.name, 'run.json');
    const resultsPath = join(root, dir.name, 'results.json');
    if (!existsSync(metaPath) || !existsSync(resultsPath)) continue;
    try {
      runs.push({ dir: dir.name, meta: readRunMeta(metaPath), results: readRunResults(resultsPath) });
    } catch (error) {
      if (!(error instanceof StoredRunError)) throw error;
      skipped.push(skippedRun(error));
    }
  }
  runs.sort((a, b) => a.meta.startedAt.localeCompare(b.meta.startedAt));
  return { runs, skipped };
}

/** `fencekit report` found no run it could read under `root`: nothing was written (exit 3). */
export class NothingToReportError extends Error {
  readonly code = 'nothing-to-report';
  constructor(readonly root: string) {
    super(
      `${root}: no run to report (no directory with a readable run.json and results.json): nothing written`,
    );
  }
  override get name(): string {
    return 'NothingToReportError';
  }
}

/** The runs of `readStoredRuns`, each skipped file told to `warn`. */
export function storedRuns(root: string, warn: Warn = warnOnStderr): StoredRun[] {
  const { runs, skipped } = readStoredRuns(root);
  for (const w of skipped) warn(w);
  return runs;
}

const faultLabel = (m: RunMeta) => cellOf(m).faults;
const rowLabel = (m: RunMeta) => `${m.backend} · ${m.fencing ? 'fencing on' : 'fencing off'}`;

export interface SiteIndexOptions {
  /** Whether an absent index may be created (default true); an existing one is rewritten only if fencekit's. */
  mayCreate?: boolean;
  warn?: Warn;
}

/**
 * Writes `<root>/index.html`, the backend × fault × fencing matrix with every run linked, unless a
 * page there is not fencekit's (left alone, with a warning). Returns the index's path.
 */
export function writeSiteIndex(root: string, options: SiteIndexOptions = {}): string {
  const warn = options.warn ?? warnOnStderr;
  const path = join(root, 'index.html');
  writeOwnPage(path, renderSiteIndex(storedRuns(root, warn)), options.mayCreate ?? true, warn);
  return path;
}

/** A run's page from the index: its directory name as one URL path segment. */
const runHref = (dir: string) => esc(`${encodeURIComponent(dir)}/index.html`);

export function renderSiteIndex(runs: readonly StoredRun[]): string {
  const rows = [...new Set(runs.map((r) => rowLabel(r.meta)))].sort();
  const columns = [...new Set(runs.map((r) => faultLabel(r.meta)))].sort();
  const cells = new Map<string, StoredRun[]>();
  for (const run of runs) {
    const key = `${rowLabel(run.meta)}|${faultLabel(run.meta)}`;
    cells.set(key, [...(cells.get(key) ?? []), run]);
  }
  const matrix = `<table id="matrix"><tr><th>backend · fencing</th>${columns.map((c) => `<th>${esc(c)}</th>`).join('')}</tr>
${rows
  .map(
    (row) =>
      `<tr><th>${esc(row)}</th>${columns
        .map((col) => {
          const here = cells.get(`${row}|${col}`) ?? [];
          const links = here.map(
            (r) =>
              `<a href="${runHref(r.dir)}" title="${esc(`${r.meta.workload}, seed ${r.meta.seed}`)}" data-run="${esc(r.dir)}">${verdictBadge(r.results.verdict)} <small>${esc(r.meta.workload)}</small></a>`,
          );
          const evidence = here.length ? evidenceLine(evidenceOf(here)) : '';
          return `<td class="cell" data-row="${esc(row)}" data-col="${esc(col)}" data-verdict="${esc(summaryVerdict(here))}">${evidence}${links.join('<br>')}</td>`;
        })
        .join('')}</tr>`,
  )
  .join('\n')}</table>`;
  const body = `
<h1>fencekit consistency report</h1>
<p>Which lock setups keep “only one at a time” under real faults, measured: each cell lists the runs of one backend,
fencing setting and fault, with the checkers’ verdict (<strong>illegal</strong> = a violation was found and is shown on
the run’s page; <strong>ok</strong> = every checker passed a complete history; <strong>unknown</strong> = not decided).
${esc(runs.length)} runs.</p>
<h2>Backend × fault × fencing</h2>
${runs.length ? matrix : '<p>No runs yet: <code>fencekit suite --short</code>.</p>'}
<h2>Evidence per cell</h2>
${evidenceTable(runs)}
<h2>Cron duplicates per 1 000 ticks</h2>
${cronTable(runs)}
<h2>All runs</h2>
<table id="runs"><tr><th>started</th><th>backend</th><th>workload</th><th>faults</th><th>fencing</th><th>seed</th><th>verdict</th><th>ops/s</th></tr>
${[...runs]
  .reverse()
  .map(
    (r) =>
      `<tr><td>${esc(r.meta.startedAt)}</td><td>${esc(r.meta.backend)}</td><td>${esc(r.meta.workload)}</td><td>${esc(faultLabel(r.meta))}</td><td>${r.meta.fencing ? 'on' : 'off'}</td><td>${esc(r.meta.seed)}</td><td><a href="${runHref(r.dir)}">${verdictBadge(r.results.verdict)}</a></td><td>${esc(r.results.summary.opsPerSecond)}</td></tr>`,
  )
  .join('\n')}</table>`;
  return page('fencekit consistency report', body);
}

function evidenceOf(runs: readonly StoredRun[]): CellEvidence {
  return cellEvidence(
    runs.map((r) => ({ verdict: r.results.verdict, firstViolationMs: r.results.summary.firstViolationMs })),
  );
}

const seconds = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1_000).toFixed(1)} s`);

/** The cell's conviction rate and time to conviction in one line above its runs. */
function evidenceLine(cell: CellEvidence): string {
  const time =
    cell.medianFirstViolationMs === undefined
      ? ''
      : ` · first violation ${seconds(cell.medianFirstViolationMs)}`;
  return `<div class="evidence muted" data-convicted="${esc(cell.convicted)}" data-judged="${esc(cell.judged)}">${esc(`convicted ${describeEvidence(cell)}${time}`)}</div>`;
}

/** Every cell's figures as a table: seeds run, convictions, the 95 % Wilson interval, time to conviction. */
function evidenceTable(runs: readonly StoredRun[]): string {
  if (runs.length === 0) return '<p class="muted">No runs.</p>';
  const cells = new Map<string, StoredRun[]>();
  for (const run of runs) {
    const key = `${rowLabel(run.meta)}|${faultLabel(run.meta)}`;
    cells.set(key, [...(cells.get(key) ?? []), run]);
  }
  const pct = (x: number | undefined) => (x === undefined ? '–' : `${(x * 100).toFixed(1)} %`);
  const rows = [...cells.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, here]) => {
      const cell = evidenceOf(here);
      const { backend, faults, fencing } = cellOf(here[0]!.meta);
      const workloads = [...new Set(here.map((r) => r.meta.workload))].sort().join(', ');
      const ci = cell.interval ? `${pct(cell.interval.low)} – ${pct(cell.interval.high)}` : '–';
      return `<tr data-cell="${esc(key)}" data-convicted="${esc(cell.convicted)}" data-judged="${esc(cell.judged)}" data-ci-low="${esc(cell.interval?.low ?? '')}" data-ci-high="${esc(cell.interval?.high ?? '')}"><td>${esc(backend)}</td><td>${esc(faults)}</td><td>${esc(fencing ? 'on' : 'off')}</td><td>${esc(workloads)}</td><td>${esc(cell.runs)}</td><td>${esc(`${cell.convicted}/${cell.judged}`)}${cell.unknown ? ` <small>${esc(`(${cell.unknown} unknown)`)}</small>` : ''}</td><td>${esc(pct(cell.rate))}</td><td class="ci">${esc(ci)}</td><td class="first-violation">${esc(seconds(cell.medianFirstViolationMs))}${cell.timedConvictions ? ` <small>${esc(`(${cell.timedConvictions} timed)`)}</small>` : ''}</td></tr>`;
    });
  return `<p class="muted">Conviction rate = runs judged illegal ÷ runs judged (ok or illegal); unknown runs count neither way. 95 % interval: Wilson score. Time to first violation: ${esc(FIRST_VIOLATION_MEASURE)}.</p>
<table id="evidence"><tr><th>backend</th><th>faults</th><th>fencing</th><th>workloads</th><th>runs</th><th>convicted / judged</th><th>rate</th><th>95 % interval (Wilson)</th><th>median time to first violation</th></tr>
${rows.join('\n')}</table>`;
}

/** One verdict per cell for tests and at-a-glance reading: any illegal, else any unknown, else ok. */
function summaryVerdict(runs: readonly StoredRun[]): string {
  if (runs.length === 0) return '';
  if (runs.some((r) => r.results.verdict === 'illegal')) return 'illegal';
  if (runs.some((r) => r.results.verdict === 'unknown')) return 'unknown';
  return 'ok';
}

function cronTable(runs: readonly StoredRun[]): string {
  const cron = runs.filter((r) => r.meta.workload === 'cron' && r.results.checkers.cron);
  if (cron.length === 0) return '<p class="muted">No cron runs.</p>';
  const rows = cron.map((r) => {
    // A checker's figures are free-form in results.json: only numbers are shown as figures.
    const s = (r.results.checkers.cron!.stats ?? {}) as Record<string, unknown>;
    const figure = (v: unknown, format = (n: number) => String(n)) =>
      esc(typeof v === 'number' ? format(v) : '?');
    return `<tr data-backend="${esc(r.meta.backend)}"><td>${esc(r.meta.backend)}</td><td>${esc(faultLabel(r.meta))}</td><td>${figure(s.ticks)}</td><td>${figure(s.duplicates)}</td><td class="rate">${figure(s.duplicatesPer1000Ticks, (n) => n.toFixed(1))}</td><td><a href="${runHref(r.dir)}">run</a></td></tr>`;
  });
  return `<table id="cron"><tr><th>backend</th><th>faults</th><th>ticks</th><th>duplicate runs</th><th>per 1 000 ticks</th><th></th></tr>${rows.join('')}</table>`;
}
