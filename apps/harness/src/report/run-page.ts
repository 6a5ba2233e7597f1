import { join } from 'node:path';
import type { HistoryEvent } from '@fencekit/checker';
import type { RunMeta, RunResults } from '../run/output.js';
import { abridge, andMore, firstOf, PAGE_LIMITS } from './abridge.js';
import { figuresHtml } from './figures.js';
import { esc, page, verdictBadge } from './html.js';
import { writeOwnPage } from './ownership.js';
import { faultColour, type ObservedSpan, plotSvg, type Series, timelineSvg } from './svg.js';
import { buildTimeline } from './timeline-data.js';
import { violationMarks } from './violations.js';
import { type Warn, warnOnStderr } from './warnings.js';

const MAX_POINTS = 20_000;
/** Bars of the throughput plot: a longer history gets wider bars, not more of them. */
const MAX_BARS = 600;

/**
 * Writes `<dir>/index.html`: verdict first, then the evidence, all inline. A page there that fencekit
 * did not write is left alone (said through `warn`).
 */
export function writeRunPage(
  dir: string,
  meta: RunMeta,
  results: RunResults,
  history: readonly HistoryEvent[],
  warn: Warn = warnOnStderr,
): boolean {
  return writeOwnPage(join(dir, 'index.html'), renderRunPage(meta, results, history), true, warn);
}

export function renderRunPage(meta: RunMeta, results: RunResults, history: readonly HistoryEvent[]): string {
  const cronHoldNs = meta.workload === 'cron' ? meta.tickMs * 2 * 1e6 : 0;
  const timeline = buildTimeline(history, meta.clients, cronHoldNs);
  const marks = violationMarks(results.checkers, history, meta.clients);
  const faults = meta.scenario ? `scenario ${meta.scenario}` : meta.faults.join(', ') || 'none';
  const title = `${meta.backend} · ${meta.workload} · ${faults} · ${meta.fencing ? 'fencing on' : 'fencing off'}`;
  const body = `
<p class="muted"><a href="../index.html">all runs</a> · run <code>${esc(meta.id)}</code></p>
<h1>${esc(title)}</h1>
<div class="banner ${esc(results.verdict)}" id="verdict" data-verdict="${esc(results.verdict)}">Verdict: <strong>${esc(results.verdict)}</strong> — ${esc(explain(results))}</div>
${results.problems.length ? `<p><strong>History incomplete:</strong> ${esc(results.problems.join('; '))}</p>` : ''}
${findingsHtml(results)}
<h2>Checkers</h2>
${checkerTable(results)}
<h2>Timeline</h2>
<p class="legend"><span><i class="swatch" style="background:#2da44e"></i>lock held (as the client believed)</span><span><i class="swatch" style="background:#54aeff"></i>op ok</span><span><i class="swatch" style="background:#ffcecb"></i>op failed</span><span><i class="swatch" style="background:#fff8c5;border:1px dashed #9a6700"></i>op outcome unknown</span><span>● write accepted by the resource</span><span style="color:#cf222e">✕ write refused (stale fence)</span><span style="color:#cf222e">▼ violation</span><span>shaded band: fault applied (start to stop op)</span><span>solid bar on the top strip, dashed edges: its effect as the probes observed it</span>${[...new Set(timeline.faults.map((f) => f.fault))].map((f) => `<span><i class="swatch" style="background:${faultColour(f)};opacity:.4"></i>${esc(f)}</span>`).join('')}</p>
${timelineSvg(timeline, marks, observedSpans(meta, timeline))}
<h2>Latency and throughput</h2>
<div style="display:flex;gap:16px;flex-wrap:wrap">${latencyPlot(timeline)}${throughputPlot(timeline)}</div>
<h2>Faults applied</h2>
${faultTable(meta)}
<h2>Run</h2>
${runTable(meta, results)}
<h2>Violations</h2>
<pre id="violations">${esc(violationText(results))}</pre>
<p class="muted">Files: <a href="history.jsonl">history.jsonl</a> · <a href="results.json">results.json</a> · <a href="run.json">run.json</a>. Re-check with <code>fencekit check ${esc(meta.id)}</code>.</p>`;
  return page(`fencekit: ${title} — ${results.verdict}`, body);
}

/**
 * What the checkers report beside their verdicts (the fences checker: how many fences the lock granted twice, and
 * whether the resource refused every stale one), said next to the verdict: a run convicted for a reused fence
 * still shows that fencing kept every stale write out.
 */
function findingsHtml(results: RunResults): string {
  const items = Object.entries(results.checkers).flatMap(([name, c]) => {
    const { shown, more } = firstOf(c.findings ?? [], PAGE_LIMITS.findings);
    const listed = shown.map((f) => `<li data-checker="${esc(name)}">${esc(name)}: ${esc(abridge(f))}</li>`);
    return more > 0 ? [...listed, `<li class="muted">${esc(`${name}: ${andMore(more)}`)}</li>`] : listed;
  });
  return items.length
    ? `<div id="findings"><strong>Findings</strong> (beside the verdict):<ul>${items.join('')}</ul></div>`
    : '';
}

function violationText(results: RunResults): string {
  const parts = Object.entries(results.checkers)
    .filter(([, c]) => c.violationCount > 0)
    .map(
      ([name, c]) =>
        `${name}: ${c.violationCount} (first ${Math.min(10, c.violations.length)} shown)\n${JSON.stringify(abridge(c.violations.slice(0, 10)), null, 1)}`,
    );
  return parts.length ? parts.join('\n\n') : 'none';
}

function explain(results: RunResults): string {
  const illegal = Object.entries(results.checkers).filter(([, c]) => c.verdict === 'illegal');
  if (illegal.length)
    return `convicted by ${illegal.map(([n, c]) => `${n} (${c.violationCount} violation${c.violationCount === 1 ? '' : 's'})`).join(', ')}`;
  const unknown = Object.entries(results.checkers).filter(([, c]) => c.verdict === 'unknown');
  if (unknown.length)
    return `not decided: ${unknown.map(([n, c]) => `${n}: ${c.error ?? 'unknown'}`).join('; ')}`;
  return 'every checker found the history legal';
}

function checkerTable(results: RunResults): string {
  const rows = Object.entries(results.checkers).map(
    ([name, c]) =>
      `<tr data-checker="${esc(name)}"><td>${esc(name)}</td><td>${verdictBadge(c.verdict)}</td><td>${esc(c.violationCount)}</td><td class="figures-cell">${figuresHtml(c.stats)}</td><td>${esc(abridge(c.error ?? ''))}</td></tr>`,
  );
  return `<table id="checkers"><tr><th>checker</th><th>verdict</th><th>violations</th><th>figures</th><th>error</th></tr>${rows.join('')}</table>`;
}

function faultTable(meta: RunMeta): string {
  if (meta.faultsApplied.length === 0) return '<p class="muted">No faults.</p>';
  const rows = meta.faultsApplied.map((f) => {
    const { observed, window } = observedCells(f);
    const saw = [f.observed?.started?.detail, f.observed?.healed && `after heal: ${f.observed.healed.detail}`]
      .filter(Boolean)
      .join('; ');
    return `<tr data-fault="${esc(f.fault)}" data-observed="${esc(observed)}"><td>${esc(f.fault)}</td><td class="figures-cell">${figuresHtml(f.target)}</td><td>${f.applied ? 'yes' : 'no'}</td><td>${esc(observed)}</td><td>${esc(window)}</td><td class="figures-cell">${esc(saw)}${f.evidence ? figuresHtml(f.evidence) : ''}</td><td>${esc(f.error ?? '')}</td></tr>`;
  });
  return `<table id="faults"><tr><th>fault</th><th>target</th><th>applied</th><th>effect observed</th><th>observed window</th><th>what the probes saw</th><th>why not</th></tr>${rows.join('')}</table>`;
}

/** "yes"/"no" from the independent probes (#20), and the span from the effect first seen to seen gone. */
function observedCells(f: RunMeta['faultsApplied'][number]): { observed: string; window: string } {
  const started = f.observed?.started;
  if (!f.applied) return { observed: '—', window: '' };
  if (!started) return { observed: 'not probed', window: '' };
  if (!started.seen) return { observed: 'no', window: '' };
  const healed = f.observed?.healed;
  const end = healed?.seen ? seconds(healed.atMs) : healed ? 'not seen to end' : 'heal not probed';
  return { observed: 'yes', window: `${seconds(started.atMs)} – ${end}` };
}

/**
 * Each fault's observed window on the history's clock: the probes stamp it in ms from the run's start
 * (`startedAtNs`; the timeline's first event in runs recorded before it was kept). An effect seen but never seen
 * to end runs to the end of the history.
 */
export function observedSpans(meta: RunMeta, timeline: { t0: number; t1: number }): ObservedSpan[] {
  const zero = meta.startedAtNs ?? timeline.t0;
  const spans: ObservedSpan[] = [];
  for (const f of meta.faultsApplied) {
    const started = f.observed?.started;
    if (!f.applied || !started?.seen) continue;
    const healed = f.observed?.healed;
    const ended = healed?.seen === true;
    const end = ended ? zero + healed.atMs * 1e6 : timeline.t1;
    const where = f.target.node
      ? ` on ${f.target.node}`
      : f.target.client === undefined
        ? ''
        : ` on client ${f.target.client}`;
    spans.push({
      fault: f.fault,
      start: zero + started.atMs * 1e6,
      end,
      ended,
      label: `${f.fault}${where}: effect observed ${seconds(started.atMs)} – ${ended ? seconds(healed.atMs) : 'not seen to end'} (${started.detail})`,
    });
  }
  return spans;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function runTable(meta: RunMeta, results: RunResults): string {
  const s = results.summary;
  const rows: [string, unknown][] = [
    ['backend / provider', `${meta.backend} / ${meta.provider} (nodes ${meta.nodes.join(', ') || '—'})`],
    ['workload', meta.workload],
    ['fencing at the resource', meta.fencing ? 'on' : 'off'],
    ['clients', meta.clients],
    ['seed', meta.seed],
    ['duration', `${meta.durationMs} ms planned, ${meta.elapsedMs} ms run`],
    ['lock TTL / window', `${meta.ttlMs} ms / ${meta.windowMs} ms`],
    [
      'operations',
      `${s.operations} (${s.ok} ok, ${s.fail} fail, ${s.info} unknown), ${s.opsPerSecond} ops/s`,
    ],
    [
      'faults',
      `${s.faultsApplied} applied, ${s.faultsFailed} not applied${meta.clientSideOnly ? '; client-side only (external servers: fencekit faulted only the clients’ path, never the servers)' : ''}`,
    ],
  ];
  return `<table>${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('')}</table>`;
}

function latencyPlot(t: ReturnType<typeof buildTimeline>): string {
  const byF = new Map<string, Series>();
  const colours = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#9a6700'];
  const stride = Math.max(1, Math.ceil(t.ops.length / MAX_POINTS));
  t.ops.forEach((op, i) => {
    if (op.end === undefined || op.type !== 'ok' || i % stride !== 0) return;
    let s = byF.get(op.f);
    if (!s) {
      s = { name: op.f, colour: colours[byF.size % colours.length]!, points: [] };
      byF.set(op.f, s);
    }
    s.points.push({ x: (op.end - t.t0) / 1e9, y: (op.end - op.start) / 1e6 });
  });
  return plotSvg('latency', [...byF.values()], {
    xLabel: 'time (s)',
    yLabel: 'latency (ms)',
    xMax: (t.t1 - t.t0) / 1e9,
  });
}

function throughputPlot(t: ReturnType<typeof buildTimeline>): string {
  const seconds = Math.max(1, Math.ceil((t.t1 - t.t0) / 1e9));
  // One bar per second, or per several for a long history (a stored one may span years).
  const width = Math.ceil(seconds / MAX_BARS);
  const bars = Math.ceil(seconds / width);
  const ok = new Array<number>(bars).fill(0);
  const failed = new Array<number>(bars).fill(0);
  for (const op of t.ops) {
    if (op.end === undefined) continue;
    const s = Math.max(0, Math.min(bars - 1, Math.floor((op.end - t.t0) / 1e9 / width)));
    if (op.type === 'ok') ok[s]!++;
    else failed[s]!++;
  }
  const perSecond = (counts: number[]) => counts.map((n, i) => ({ x: i * width, y: n / width }));
  return plotSvg(
    'throughput',
    [
      { name: 'ok/s', colour: '#1a7f37', points: perSecond(ok) },
      { name: 'failed or unknown/s', colour: '#cf222e', points: perSecond(failed) },
    ],
    { xLabel: 'time (s)', yLabel: 'operations per second', bars: true, xMax: seconds },
  );
}
