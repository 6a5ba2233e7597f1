import { createHash } from 'node:crypto';
import { pairOperations } from '../history/pairing.js';
import type { HistoryEvent, Operation, Verdict } from '../history/types.js';
import type { PartitionResult } from '../linearizability/check.js';
import { RESOURCE_PROCESS } from '../lock/events.js';
import { type CheckResult, composeVerdicts, isVerdict } from '../verdict.js';
import { type LaneViolation, renderLockLanes } from './lanes.js';
import { brief, esc, inlineJson } from './markup.js';
import { OperationIndex, type PartitionView, renderPartition, toPartitionView } from './operations.js';
import { PAGE_CSS, PAGE_JS, SVG_DEFS } from './page.js';

/**
 * The page's policy: no network, and no script but the page's own, allowed by its hash (computed here, so it
 * follows PAGE_JS): markup that got past the escaping cannot run script, inline or not, nor redirect relative
 * links (base-uri) or post a form anywhere (form-action). The JSON data block is not script: it is never run.
 */
export const PAGE_CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${createHash('sha256').update(PAGE_JS, 'utf8').digest('base64')}'; img-src data:; base-uri 'none'; form-action 'none'`;

export interface RenderOptions {
  /** Page heading; default "fencekit check". */
  title?: string;
  /** Shown under the heading: the history file, the model, anything that identifies the run. */
  subtitle?: string;
  /** Unit of `call`/`ret`/`time`: `ns` (harness histories, default) or `index` (EDN, porcupine logs). */
  timeUnit?: 'ns' | 'index';
}

/** A check result as the page reads it: any `CheckResult`, plus `partitions` for linearizability. */
export type RenderableResult = Partial<CheckResult> & {
  verdict: Verdict;
  partitions?: readonly (PartitionView | PartitionResult)[];
};

/**
 * One self-contained HTML page for a check: every style, script and drawing inline, the results inlined
 * as JSON, and a Content-Security-Policy that forbids any network access. Accepts a single result or a
 * composite (`{ verdict, results: { name: result } }`, as `runCheckers` returns).
 *
 * Linearizability results (with `partitions`) are drawn as per-process timelines with the linearization
 * or the largest partial one and the operations that could not be placed; lock histories (with resource
 * events) as lanes per client with holding intervals and every violation marked.
 */
export function renderHtml(
  result: RenderableResult | { verdict: Verdict; results: Record<string, RenderableResult> },
  history: readonly HistoryEvent[] | readonly Operation[],
  options: RenderOptions = {},
): string {
  const checks: [string, RenderableResult][] =
    'results' in result && result.results !== undefined
      ? Object.entries(result.results)
      : [['check', result as RenderableResult]];
  const verdict = isVerdict(result.verdict)
    ? result.verdict
    : composeVerdicts(checks.map(([, r]) => r.verdict));
  const { events, operations: read } = splitHistory(history);
  let index: OperationIndex | undefined;
  const operations = () => {
    index ??= new OperationIndex(read());
    return index;
  };
  const unit = options.timeUnit ?? 'ns';
  const title = options.title ?? 'fencekit check';

  const body: string[] = [];
  const laneViolations: LaneViolation[] = [];
  for (const [name, r] of checks) {
    body.push(checkSection(name, r, operations, unit));
    for (const [row, violation] of (r.violations ?? []).slice(0, 500).entries()) {
      laneViolations.push({ check: name, row, violation });
    }
  }
  const lanes = events.some((e) => e.process === RESOURCE_PROCESS)
    ? renderLockLanes(events, laneViolations)
    : '';

  const data = { verdict, checks: Object.fromEntries(checks.map(([n, r]) => [n, summary(r)])) };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(PAGE_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} — ${esc(verdict)}</title>
<style>${PAGE_CSS}</style>
</head>
<body data-verdict="${esc(verdict)}">
${SVG_DEFS}
<header>
<h1>${esc(title)} <span class="badge verdict" data-verdict="${esc(verdict)}">${esc(verdict)}</span></h1>
${options.subtitle === undefined ? '' : `<p class="meta">${esc(options.subtitle)}</p>`}
<p class="controls"><label>zoom <input id="zoom" type="range" min="1" max="8" step="0.5" value="1"></label></p>
</header>
<main>
${lanes === '' ? '' : `<section class="lock-lanes"><h2>Lock holders</h2><div class="scroll">${lanes}</div></section>`}
${body.join('\n')}
</main>
<script type="application/json" id="fencekit-data">${inlineJson(data)}</script>
<script>${PAGE_JS}</script>
</body>
</html>
`;
}

function checkSection(
  name: string,
  r: RenderableResult,
  operations: () => OperationIndex,
  unit: 'ns' | 'index',
): string {
  const parts = [
    `<h2>${esc(name)} <span class="badge" data-verdict="${esc(r.verdict)}">${esc(r.verdict)}</span></h2>`,
  ];
  if (r.error !== undefined) parts.push(`<p class="error">${esc(r.error)}</p>`);
  if (r.stats !== undefined) parts.push(statsList(r.stats));
  if (r.violations !== undefined && r.violations.length > 0) parts.push(violationTable(name, r.violations));
  for (const p of (r.partitions ?? []).map(toPartitionView)) {
    const label = p.key === undefined ? 'history' : `key ${p.key}`;
    parts.push(
      `<section class="partition" data-key="${esc(p.key ?? '')}" data-verdict="${esc(p.verdict)}"><h3>${esc(label)} <span class="badge" data-verdict="${esc(p.verdict)}">${esc(p.verdict)}</span></h3>${p.error === undefined ? '' : `<p class="error">${esc(p.error)}</p>`}<div class="scroll">${renderPartition(p, operations(), unit)}</div></section>`,
    );
  }
  return `<section class="check" data-check="${esc(name)}" data-verdict="${esc(r.verdict)}">${parts.join('')}</section>`;
}

function statsList(stats: unknown): string {
  if (typeof stats !== 'object' || stats === null) return '';
  const rows = Object.entries(stats).map(([k, v]) => {
    const text =
      typeof v === 'number' && !Number.isInteger(v) ? String(Math.round(v * 100) / 100) : brief(v, 200);
    return `<dt>${esc(k)}</dt><dd>${esc(text)}</dd>`;
  });
  return rows.length === 0 ? '' : `<dl class="stats">${rows.join('')}</dl>`;
}

function violationTable(check: string, violations: readonly unknown[]): string {
  const shown = violations.slice(0, 500);
  const rows = shown.map((v, i) => {
    const kind = (v as { kind?: unknown } | null)?.kind;
    const message = (v as { message?: unknown } | null)?.message;
    return `<tr class="violation" data-check="${esc(check)}" data-violation="${i}" data-kind="${esc(kind ?? '')}"><td>${i + 1}</td><td>${esc(kind ?? '')}</td><td>${typeof message === 'string' ? `${esc(message)}<br>` : ''}<code>${esc(brief(v, 400))}</code></td></tr>`;
  });
  const more =
    violations.length > shown.length
      ? `<p class="note">${violations.length - shown.length} more not shown.</p>`
      : '';
  return `<table class="violations"><thead><tr><th>#</th><th>kind</th><th>details</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}`;
}

/** What is inlined as data: verdicts, errors, stats and the first violations, not the whole history. */
function summary(r: RenderableResult): unknown {
  return {
    verdict: r.verdict,
    error: r.error,
    stats: r.stats,
    violations: (r.violations ?? []).slice(0, 500),
    partitions: r.partitions
      ?.map(toPartitionView)
      .map((p) => ({ key: p.key, verdict: p.verdict, unplaced: p.unplaced })),
  };
}

/** The history as events (for lock lanes) and, lazily, as operations (for timelines). */
function splitHistory(history: readonly HistoryEvent[] | readonly Operation[]): {
  events: readonly HistoryEvent[];
  operations: () => readonly Operation[];
} {
  const first = history[0];
  if (first !== undefined && 'call' in first) {
    return { events: [], operations: () => history as readonly Operation[] };
  }
  const events = history as readonly HistoryEvent[];
  let ops: Operation[] | undefined;
  return {
    events,
    operations: () => {
      ops ??= pairOperations(events.filter((e) => e.process !== RESOURCE_PROCESS));
      return ops;
    },
  };
}
