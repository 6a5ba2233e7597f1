import type { HistoryEvent } from '../history/types.js';
import { RESOURCE_PROCESS } from '../lock/events.js';
import { type CriticalSection, criticalSections } from '../lock/mutex.js';
import { brief, compareLabels, esc, formatTime, TimeAxis, timeRange } from './markup.js';

/** A violation the lanes can point at: overlapping holders, or one event at fault. */
interface Marked {
  kind?: unknown;
  first?: { client?: unknown; start?: number; from?: number };
  second?: { client?: unknown; start?: number; from?: number };
  from?: unknown;
  to?: unknown;
  index?: unknown;
  client?: unknown;
}

/** A violation to mark, with the check that found it and its row number in that check's table. */
export interface LaneViolation {
  check: string;
  row: number;
  violation: unknown;
}

const LANE_H = 26;
const LABEL_W = 140;
const WIDTH = 1100;
/** Beyond this many holding intervals the page would be too heavy to open; the rest are counted. */
const MAX_SECTIONS = 5000;
const MAX_MARKS = 10_000;

/**
 * Lanes per client with their critical sections as the resource timed them, the resource's other
 * observations as marks (hollow = refused), faults in a nemesis lane, and each violation marked in red:
 * overlaps as bands across the lanes of both holders, single-event violations as rings.
 */
export function renderLockLanes(
  history: readonly HistoryEvent[],
  violations: readonly LaneViolation[],
): string {
  const resource = history.filter((e) => e.process === RESOURCE_PROCESS);
  const faults = history.filter((e) => e.process === 'nemesis');
  if (resource.length === 0) return '';
  let sections: CriticalSection[] = [];
  try {
    sections = criticalSections(resource).sections;
  } catch {
    // Malformed lines are reported by the checkers; the drawing shows what it can.
  }
  const clients = [...new Set(resource.map(clientKey).filter((c) => c !== ''))].sort(compareLabels);
  const laneOf = new Map(clients.map((c, i) => [c, i]));
  const byIndex = new Map(resource.map((e) => [e.index, e]));
  const view = focus(sections, violations, byIndex);
  const within = (t: number) => view === undefined || (t >= view.from && t <= view.to);
  const { min, max } =
    view === undefined
      ? timeRange([...resource.map((e) => e.time), ...faults.map((e) => e.time)])
      : { min: view.from, max: view.to };
  const axis = new TimeAxis(min, max, LABEL_W, WIDTH - LABEL_W - 10);
  const faultRow = faults.length > 0 ? 1 : 0;
  const y = (lane: number) => 24 + (lane + faultRow) * LANE_H;
  const height = y(clients.length) + 10;

  const parts: string[] = [];
  parts.push(axisMarkup(axis, height));
  if (faultRow)
    parts.push(
      nemesisLane(
        faults.filter((e) => within(e.time)),
        axis,
        y(-1),
      ),
    );
  clients.forEach((c, i) => {
    parts.push(
      `<g class="lane" data-client="${esc(c)}"><text class="lane-label" x="4" y="${y(i) + 16}">client ${esc(c)}</text>`,
    );
    parts.push(
      `<line class="lane-rule" x1="${LABEL_W}" x2="${WIDTH - 10}" y1="${y(i) + LANE_H - 2}" y2="${y(i) + LANE_H - 2}"/></g>`,
    );
  });
  const drawn = view === undefined ? sections : sections.slice(view.first, view.first + MAX_SECTIONS);
  for (const s of drawn) {
    const lane = laneOf.get(String(s.client));
    if (lane === undefined) continue;
    const open = !Number.isFinite(s.end);
    const tip = `client ${s.client}${s.fence === undefined ? '' : ` fence ${s.fence}`}: ${formatTime(s.start, 'ns')} → ${open ? 'never left' : formatTime(s.end, 'ns')}`;
    parts.push(
      `<rect class="hold${open ? ' open' : ''}" data-client="${esc(s.client)}" data-fence="${esc(s.fence ?? '')}" x="${axis.x(s.start).toFixed(1)}" y="${y(lane) + 4}" width="${axis.span(s.start, s.end).toFixed(1)}" height="${LANE_H - 10}"><title>${esc(tip)}</title></rect>`,
    );
  }
  let marks = 0;
  for (const e of resource) {
    if (e.f === 'enter' || e.f === 'leave' || !within(e.time)) continue;
    if (++marks > MAX_MARKS) break;
    const lane = laneOf.get(clientKey(e));
    if (lane === undefined) continue;
    const refused = (e.value as { accepted?: unknown }).accepted === false;
    parts.push(
      `<circle class="mark ${esc(e.f)}${refused ? ' refused' : ''}" data-index="${e.index}" cx="${axis.x(e.time).toFixed(1)}" cy="${y(lane) + LANE_H / 2 - 1}" r="3.5"><title>${esc(`#${e.index} ${e.f} ${brief(e.value)}`)}</title></circle>`,
    );
  }
  for (const v of violations) {
    const at = violationTime(v.violation as Marked, byIndex);
    if (at !== undefined && !within(at)) continue;
    const ref = `data-check="${esc(v.check)}" data-violation="${v.row}"`;
    parts.push(violationMarks(v.violation as Marked, ref, byIndex, laneOf, axis, y));
  }

  const notes: string[] = [];
  if (sections.length > drawn.length)
    notes.push(`the first ${drawn.length} of ${sections.length} critical sections`);
  if (marks > MAX_MARKS) notes.push(`the first ${MAX_MARKS} reads, writes, claims and runs`);
  const note = notes.length === 0 ? '' : `<p class="note">Drawing ${notes.join(' and ')}.</p>`;
  return `<figure class="lanes" data-lanes="${clients.length}">${note}<svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg><figcaption>Lanes per client as the resource saw them: bars are critical sections (hatched = never left), dots are reads/writes/claims/runs (hollow = refused), red = violations.</figcaption></figure>`;
}

/**
 * For histories too long to draw whole: a window of MAX_SECTIONS sections centred on the first
 * violation (or the start), so what convicted the run is on screen. Undefined = draw everything.
 */
function focus(
  sections: readonly CriticalSection[],
  violations: readonly LaneViolation[],
  byIndex: ReadonlyMap<number, HistoryEvent>,
): { first: number; from: number; to: number } | undefined {
  if (sections.length <= MAX_SECTIONS) return undefined;
  let when = Number.POSITIVE_INFINITY;
  for (const v of violations) when = Math.min(when, violationTime(v.violation as Marked, byIndex) ?? when);
  if (!Number.isFinite(when)) when = sections[0]!.start;
  // Sections come in start order (the sweep's), so the first one starting after `when` is found by bisection.
  let lo = 0;
  let hi = sections.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sections[mid]!.start < when) lo = mid + 1;
    else hi = mid;
  }
  const first = Math.max(0, Math.min(lo - MAX_SECTIONS / 2, sections.length - MAX_SECTIONS));
  const shown = sections.slice(first, first + MAX_SECTIONS);
  const from = shown[0]!.start;
  let to = shown[shown.length - 1]!.start;
  for (const s of shown) if (Number.isFinite(s.end) && s.end > to) to = s.end;
  return { first, from, to };
}

function violationTime(v: Marked, byIndex: ReadonlyMap<number, HistoryEvent>): number | undefined {
  if (typeof v.from === 'number') return v.from;
  if (typeof v.index === 'number') return byIndex.get(v.index)?.time;
  return undefined;
}

function violationMarks(
  v: Marked,
  ref: string,
  byIndex: ReadonlyMap<number, HistoryEvent>,
  laneOf: Map<string, number>,
  axis: TimeAxis,
  y: (lane: number) => number,
): string {
  if (v.first && v.second && typeof v.from === 'number' && typeof v.to === 'number') {
    const lanes = [laneOf.get(String(v.first.client)), laneOf.get(String(v.second.client))].filter(
      (l): l is number => l !== undefined,
    );
    if (lanes.length === 0) return '';
    const top = y(Math.min(...lanes));
    const bottom = y(Math.max(...lanes)) + LANE_H;
    return `<rect class="overlap" ${ref} x="${axis.x(v.from).toFixed(1)}" y="${top}" width="${axis.span(v.from, v.to).toFixed(1)}" height="${bottom - top}"><title>${esc(`${String(v.kind)}: client ${String(v.first.client)} and client ${String(v.second.client)} from ${formatTime(v.from, 'ns')} to ${formatTime(v.to, 'ns')}`)}</title></rect>`;
  }
  if (typeof v.index === 'number') {
    const event = byIndex.get(v.index);
    const lane = event === undefined ? undefined : laneOf.get(clientKey(event));
    if (event === undefined || lane === undefined) return '';
    return `<circle class="violation-mark" ${ref} cx="${axis.x(event.time).toFixed(1)}" cy="${y(lane) + LANE_H / 2 - 1}" r="7"><title>${esc(`${String(v.kind)} at #${event.index}`)}</title></circle>`;
  }
  return '';
}

function nemesisLane(faults: readonly HistoryEvent[], axis: TimeAxis, top: number): string {
  const marks = faults.map(
    (e) =>
      `<line class="fault" x1="${axis.x(e.time).toFixed(1)}" x2="${axis.x(e.time).toFixed(1)}" y1="${top + 3}" y2="${top + LANE_H - 3}"><title>${esc(`#${e.index} nemesis ${e.type} ${e.f} ${brief(e.value)}`)}</title></line>`,
  );
  return `<g class="lane nemesis" data-client="nemesis"><text class="lane-label" x="4" y="${top + 16}">nemesis</text>${marks.join('')}</g>`;
}

function axisMarkup(axis: TimeAxis, height: number): string {
  const ticks: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const t = axis.min + ((axis.max - axis.min) * i) / 5;
    const x = axis.x(t).toFixed(1);
    ticks.push(
      `<line class="tick" x1="${x}" x2="${x}" y1="16" y2="${height}"/><text class="tick-label" x="${x}" y="12" text-anchor="${i === 0 ? 'start' : i === 5 ? 'end' : 'middle'}">${esc(formatTime(t - axis.min, 'ns'))}</text>`,
    );
  }
  return `<g class="axis">${ticks.join('')}</g>`;
}

function clientKey(event: HistoryEvent): string {
  const client = (event.value as { client?: unknown } | null)?.client;
  return client === undefined || client === null ? '' : String(client);
}
