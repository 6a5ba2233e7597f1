import { esc } from './html.js';
import type { Timeline } from './timeline-data.js';

/** A point or band the checkers blamed, placed on the timeline. */
export interface ViolationMark {
  time: number;
  end?: number;
  lane?: number;
  /** For a band: the lanes it blames (two holders believing at once), drawn in red on their hold rows. */
  lanes?: number[];
  label: string;
}

/**
 * A fault's effect as the independent probes saw it (#20): from the probe that saw it take effect to the one that
 * saw it gone after the heal (`ended` false: never seen to end, drawn to the end of the run).
 */
export interface ObservedSpan {
  fault: string;
  start: number;
  end: number;
  ended: boolean;
  label: string;
}

const WIDTH = 1200;
const LEFT = 80;
const RIGHT = 16;
const LANE = 26;
const FAULT_COLOURS: Record<string, string> = {
  'pause-client': '#fb8f44',
  'pause-server': '#d4a72c',
  kill: '#8250df',
  partition: '#0969da',
  isolate: '#0969da',
  'cut-clients': '#1f6feb',
  'clock-jump': '#bf3989',
  'clock-drift': '#bf3989',
  latency: '#57606a',
};
/** Op colours by name; lock-free and unknown names fall back to grey. */
const OP_COLOURS: Record<string, string> = {
  acquire: '#8c959f',
  buy: '#54aeff',
  enter: '#54aeff',
  leave: '#8c959f',
  release: '#8c959f',
  campaign: '#8c959f',
  claim: '#54aeff',
  resign: '#8c959f',
  lock: '#8c959f',
  run: '#54aeff',
};

// Own keys only: a stored fault named 'constructor' would otherwise print a function's source.
export const faultColour = (fault: string) =>
  Object.hasOwn(FAULT_COLOURS, fault) ? FAULT_COLOURS[fault]! : '#6e7781';

/**
 * One lane per client: ops, lock-holding intervals, the resource's accepted/refused marks, faults, violations.
 * Each fault's applied window (its start op to its stop op) is a shaded band across the lanes; the window its
 * effect was observed in, where the probes saw one, is a solid bar in the strip above the lanes, with dashed
 * edges down through them.
 */
export function timelineSvg(
  t: Timeline,
  violations: readonly ViolationMark[],
  observed: readonly ObservedSpan[] = [],
): string {
  const span = Math.max(1, t.t1 - t.t0);
  const x = (time: number) => LEFT + ((time - t.t0) / span) * (WIDTH - LEFT - RIGHT);
  // Observed windows come from run.json, not the history: kept within the drawn span.
  const within = (time: number) => x(Math.min(Math.max(time, t.t0), t.t1));
  const top = 36;
  const height = top + t.lanes * LANE + 28;
  const out: string[] = [];
  out.push(
    `<svg id="timeline" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="timeline">`,
  );
  for (const f of t.faults) {
    const w = Math.max(2, x(f.end) - x(f.start));
    out.push(
      `<rect class="fault" data-fault="${esc(f.fault)}" x="${x(f.start).toFixed(1)}" y="${top - 4}" width="${w.toFixed(1)}" height="${t.lanes * LANE + 8}" fill="${faultColour(f.fault)}" fill-opacity="${f.applied ? 0.16 : 0.05}"><title>${esc(f.label)}</title></rect>`,
    );
  }
  if (observed.length > 0) out.push(`<text x="4" y="12">observed</text>`);
  for (const o of observed) {
    const x1 = within(o.start);
    const w = Math.max(2, within(o.end) - x1);
    const colour = faultColour(o.fault);
    const bottom = top + t.lanes * LANE + 4;
    out.push(
      `<rect class="observed" data-fault="${esc(o.fault)}" data-ended="${o.ended}" x="${x1.toFixed(1)}" y="4" width="${w.toFixed(1)}" height="10" fill="${colour}"${o.ended ? '' : ' fill-opacity="0.45"'} stroke="${colour}"><title>${esc(o.label)}</title></rect>`,
      `<line class="observed-edge" x1="${x1.toFixed(1)}" x2="${x1.toFixed(1)}" y1="14" y2="${bottom}" stroke="${colour}" stroke-dasharray="3 3"/>`,
    );
    if (o.ended)
      out.push(
        `<line class="observed-edge" x1="${(x1 + w).toFixed(1)}" x2="${(x1 + w).toFixed(1)}" y1="14" y2="${bottom}" stroke="${colour}" stroke-dasharray="3 3"/>`,
      );
  }
  for (let lane = 0; lane < t.lanes; lane++) {
    const y = top + lane * LANE;
    out.push(
      `<text x="4" y="${y + 16}">client ${lane}</text><line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y + LANE - 1}" y2="${y + LANE - 1}" stroke="#eaeef2"/>`,
    );
  }
  for (const h of t.holds) {
    const y = top + h.lane * LANE + 2;
    out.push(
      `<rect class="hold" x="${x(h.start).toFixed(1)}" y="${y}" width="${Math.max(1, x(h.end) - x(h.start)).toFixed(1)}" height="6" fill="#2da44e"><title>${esc(`holds lock: ${h.label}`)}</title></rect>`,
    );
  }
  const drawOps = t.ops.length <= 30_000;
  if (drawOps) {
    for (const op of t.ops) {
      const y = top + op.lane * LANE + 10;
      const end = op.end ?? t.t1;
      const fill =
        op.type === 'ok'
          ? (Object.hasOwn(OP_COLOURS, op.f) && OP_COLOURS[op.f]) || '#8c959f'
          : op.type === 'fail'
            ? '#ffcecb'
            : '#fff8c5';
      const stroke =
        op.type === 'info' || op.type === 'open' ? ' stroke="#9a6700" stroke-dasharray="2 2"' : '';
      out.push(
        `<rect class="op" x="${x(op.start).toFixed(1)}" y="${y}" width="${Math.max(1, x(end) - x(op.start)).toFixed(1)}" height="8" fill="${fill}"${stroke}><title>${esc(`p${op.process} ${op.f} ${op.type} ${JSON.stringify(op.value)}`)}</title></rect>`,
      );
    }
  }
  for (const m of t.resource) {
    const cx = x(m.time).toFixed(1);
    const y = top + m.lane * LANE + 21;
    out.push(
      m.accepted
        ? `<circle class="write accepted" cx="${cx}" cy="${y}" r="2.5" fill="#0550ae"><title>${esc(m.label)}</title></circle>`
        : `<path class="write refused" d="M${Number(cx) - 3},${y - 3}l6,6m0,-6l-6,6" stroke="#cf222e" stroke-width="1.6"><title>${esc(m.label)}</title></path>`,
    );
  }
  for (const v of violations) {
    const x1 = x(v.time);
    if (v.end !== undefined && v.end > v.time) {
      // At least 4 px: a 30 ms overlap in a 10 s run must still be seen on the lanes.
      const w = Math.max(4, x(Math.min(v.end, t.t1)) - x1).toFixed(1);
      for (const lane of v.lanes ?? []) {
        out.push(
          `<rect class="violation-lane" data-lane="${lane}" x="${x1.toFixed(1)}" y="${top + lane * LANE + 1}" width="${w}" height="8" fill="#cf222e"><title>${esc(v.label)}</title></rect>`,
        );
      }
      out.push(
        `<rect class="violation" x="${x1.toFixed(1)}" y="${top - 8}" width="${Math.max(2, x(v.end) - x1).toFixed(1)}" height="${t.lanes * LANE + 12}" fill="none" stroke="#cf222e" stroke-width="2"><title>${esc(v.label)}</title></rect>`,
      );
    } else {
      const y = v.lane === undefined ? top - 8 : top + v.lane * LANE;
      out.push(
        `<path class="violation" d="M${x1.toFixed(1)},${y} l-5,-8 h10 z" fill="#cf222e"><title>${esc(v.label)}</title></path><line x1="${x1.toFixed(1)}" x2="${x1.toFixed(1)}" y1="${y}" y2="${top + t.lanes * LANE}" stroke="#cf222e" stroke-width="1"/>`,
      );
    }
  }
  const seconds = span / 1e9;
  let step = seconds > 60 ? 10 : seconds > 20 ? 5 : seconds > 5 ? 1 : 0.5;
  // A stored history may claim to span years: at most 60 ticks, whatever its length.
  while (seconds / step > 60) step *= 10;
  for (let s = 0; s <= seconds + 1e-9; s += step) {
    const xs = x(t.t0 + s * 1e9).toFixed(1);
    out.push(
      `<line x1="${xs}" x2="${xs}" y1="${height - 26}" y2="${height - 20}" stroke="#656d76"/><text x="${xs}" y="${height - 8}" text-anchor="middle">${Number(s.toFixed(1))}s</text>`,
    );
  }
  if (!drawOps)
    out.push(
      `<text x="${LEFT}" y="14">(${t.ops.length} ops: individual ops omitted, holds and resource marks shown)</text>`,
    );
  out.push('</svg>');
  return out.join('\n');
}

export interface Series {
  name: string;
  colour: string;
  points: { x: number; y: number }[];
}

/** A small scatter/line plot with labelled axes; `bars` draws one bar per point instead. */
export function plotSvg(
  id: string,
  series: readonly Series[],
  options: { xLabel: string; yLabel: string; bars?: boolean; xMax?: number },
): string {
  const w = 580;
  const h = 220;
  const left = 52;
  const bottom = 34;
  const all = series.flatMap((s) => s.points);
  const xMax = options.xMax ?? Math.max(1, ...all.map((p) => p.x));
  const yMax = niceMax(Math.max(1, ...all.map((p) => p.y)));
  const x = (v: number) => left + (v / xMax) * (w - left - 10);
  const y = (v: number) => h - bottom - (v / yMax) * (h - bottom - 10);
  const out: string[] = [
    `<svg id="${esc(id)}" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${esc(options.yLabel)}">`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    out.push(
      `<line x1="${left}" x2="${w - 10}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eaeef2"/><text x="${left - 4}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${Number(v.toPrecision(3))}</text>`,
    );
  }
  for (let i = 0; i <= 5; i++) {
    const v = (xMax * i) / 5;
    out.push(
      `<text x="${x(v).toFixed(1)}" y="${h - bottom + 14}" text-anchor="middle">${Number(v.toFixed(1))}</text>`,
    );
  }
  out.push(`<text x="${(left + w) / 2}" y="${h - 4}" text-anchor="middle">${esc(options.xLabel)}</text>`);
  out.push(
    `<text x="12" y="${(h - bottom) / 2}" transform="rotate(-90 12 ${(h - bottom) / 2})" text-anchor="middle">${esc(options.yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    out.push(`<text x="${left + 8 + i * 110}" y="12" style="fill:${s.colour}">■ ${esc(s.name)}</text>`);
    const barW = Math.max(1, (w - left - 10) / Math.max(1, xMax) - 1);
    for (const p of s.points) {
      if (options.bars) {
        out.push(
          `<rect x="${x(p.x).toFixed(1)}" y="${y(p.y).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(0) - y(p.y)).toFixed(1)}" fill="${s.colour}" fill-opacity="0.75"/>`,
        );
      } else {
        out.push(
          `<circle cx="${x(p.x).toFixed(1)}" cy="${y(p.y).toFixed(1)}" r="1.6" fill="${s.colour}" fill-opacity="0.7"/>`,
        );
      }
    }
  });
  out.push('</svg>');
  return out.join('');
}

function niceMax(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
