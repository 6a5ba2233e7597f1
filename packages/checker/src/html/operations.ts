import type { Operation, Verdict } from '../history/types.js';
import type { PartitionResult } from '../linearizability/check.js';
import { brief, compareLabels, esc, formatTime, TimeAxis, timeRange } from './markup.js';

/**
 * What the visualisation needs from a linearizability check, per partition (key): the operations, the
 * linearization found (`ok`) or the longest partial one (`illegal`/`unknown`), and the operations that
 * could not be placed after it.
 */
export interface PartitionView {
  key?: string;
  verdict: Verdict;
  /** Ids of this partition's operations; by default those whose `key` matches, or all. */
  operations?: readonly number[];
  /** Operation ids in linearization order: complete when `ok`, the longest partial one otherwise. */
  linearization?: readonly number[];
  /** Operations that could not be placed next (the counter-example's frontier), with why when known. */
  unplaced?: readonly (number | { id: number; description?: string; reason?: string })[];
  error?: string;
}

/**
 * Reads a partition as the linearizability checker reports it (`opIds`, `linearization` when ok, a
 * `witness` with the longest prefix and the unplaced ops when illegal) or as a `PartitionView`.
 */
export function toPartitionView(p: PartitionView | PartitionResult): PartitionView {
  if (!('opIds' in p)) return p;
  const view: PartitionView = { verdict: p.verdict, operations: p.opIds };
  if (p.key !== undefined) view.key = p.key;
  const order = p.linearization ?? p.witness?.prefix;
  if (order !== undefined) view.linearization = order;
  if (p.witness !== undefined) view.unplaced = p.witness.unplaced;
  const why = [p.reason, p.error, p.witness?.conviction].filter((x) => x !== undefined);
  if (why.length > 0) view.error = why.join(': ');
  return view;
}

/**
 * A history's operations looked up by id and by key, built once per page: a page of K partitions
 * (independent keys) would otherwise scan every op K times, quadratic in the history (review 15b F4).
 */
export class OperationIndex {
  private readonly position = new Map<number, number>();
  private readonly ops: readonly Operation[];
  private byKey: Map<string, Operation[]> | undefined;

  constructor(all: readonly Operation[]) {
    // One pass over the history; everything below reads the copy.
    this.ops = [...all];
    this.ops.forEach((op, i) => {
      this.position.set(op.id, i);
    });
  }

  /** The view's operations in history order: its ids when it names them, else its key's, else all. */
  of(view: PartitionView): Operation[] {
    if (view.operations !== undefined) {
      const at = [...new Set(view.operations)]
        .map((id) => this.position.get(id))
        .filter((i): i is number => i !== undefined)
        .sort((a, b) => a - b);
      return at.map((i) => this.ops[i] as Operation);
    }
    if (view.key === undefined) return [...this.ops];
    if (this.byKey === undefined) {
      this.byKey = new Map();
      for (const op of this.ops) {
        const key = op.key ?? '';
        const list = this.byKey.get(key);
        if (list === undefined) this.byKey.set(key, [op]);
        else list.push(op);
      }
    }
    return [...(this.byKey.get(view.key) ?? [])];
  }
}

const LANE_H = 28;
const LABEL_W = 110;
const WIDTH = 1100;
const MAX_OPS = 4000;

/**
 * One partition drawn as porcupine does: a lane per process, each operation a box from call to return
 * (hatched when its return is unknown), numbered in linearization order and joined by the path of
 * linearization points; the operations that could not be placed are outlined in red.
 */
export function renderPartition(
  view: PartitionView,
  index: OperationIndex,
  timeUnit: 'ns' | 'index',
): string {
  const ops = index.of(view);
  const order = new Map((view.linearization ?? []).map((id, i) => [id, i]));
  const unplaced = new Set((view.unplaced ?? []).map(unplacedId));
  const processes = [...new Set(ops.map((op) => String(op.process)))].sort(compareLabels);
  const laneOf = new Map(processes.map((p, i) => [p, i]));
  const { min, max } = timeRange(ops.flatMap((op) => [op.call, op.ret]));
  const axis = new TimeAxis(min, max, LABEL_W, WIDTH - LABEL_W - 10);
  const y = (lane: number) => 8 + lane * LANE_H;
  const height = y(processes.length) + 8;
  const byId = new Map(ops.map((op) => [op.id, op]));

  const parts: string[] = [];
  processes.forEach((p, i) => {
    parts.push(
      `<g class="lane" data-process="${esc(p)}"><text class="lane-label" x="4" y="${y(i) + 18}">process ${esc(p)}</text></g>`,
    );
  });
  const drawn = ops.slice(0, MAX_OPS);
  for (const op of drawn) {
    const lane = laneOf.get(String(op.process)) ?? 0;
    const rank = order.get(op.id);
    const classes = ['op', op.status];
    if (rank !== undefined) classes.push('linearized');
    if (unplaced.has(op.id)) classes.push('unplaced');
    if (!Number.isFinite(op.ret)) classes.push('open');
    const x = axis.x(op.call);
    const w = axis.span(op.call, op.ret);
    const label = `${rank === undefined ? '' : `${rank + 1}. `}${op.f} ${brief(op.input, 24)} → ${brief(op.output, 24)}`;
    const tip = `op ${op.id} (process ${op.process}${op.key === undefined ? '' : `, key ${op.key}`}): ${op.f} ${brief(op.input)} → ${op.status} ${brief(op.output)}; ${formatTime(op.call, timeUnit)} → ${formatTime(op.ret, timeUnit)}${rank === undefined ? '' : `; linearized #${rank + 1}`}${unplaced.has(op.id) ? '; could not be placed' : ''}`;
    const text =
      w > 36
        ? `<text class="op-label" x="${(x + 3).toFixed(1)}" y="${y(lane) + 17}">${esc(clip(label, w))}</text>`
        : '';
    parts.push(
      `<g class="${classes.join(' ')}" data-op="${op.id}"><rect x="${x.toFixed(1)}" y="${y(lane) + 4}" width="${w.toFixed(1)}" height="${LANE_H - 8}" rx="3"/>${text}<title>${esc(tip)}</title></g>`,
    );
  }
  parts.push(linearizationPath(view.linearization ?? [], byId, laneOf, axis, y));
  const note =
    ops.length > drawn.length
      ? `<p class="note">Drawing the first ${drawn.length} of ${ops.length} operations.</p>`
      : '';
  return `${note}<svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>${orderList(view, byId, order)}`;
}

/**
 * Linearization points in order: each as early as its call allows but not before the previous point,
 * which is a valid choice whenever the order itself is valid.
 */
function linearizationPath(
  ids: readonly number[],
  byId: ReadonlyMap<number, Operation>,
  laneOf: ReadonlyMap<string, number>,
  axis: TimeAxis,
  y: (lane: number) => number,
): string {
  const points: string[] = [];
  let t = Number.NEGATIVE_INFINITY;
  for (const id of ids) {
    const op = byId.get(id);
    if (op === undefined) continue;
    t = Math.min(Math.max(t, op.call), op.ret);
    points.push(`${axis.x(t).toFixed(1)},${y(laneOf.get(String(op.process)) ?? 0) + LANE_H / 2}`);
  }
  if (points.length === 0) return '';
  const dots = points.map((p) => {
    const [cx, cy] = p.split(',');
    return `<circle class="point" cx="${cx}" cy="${cy}" r="2.5"/>`;
  });
  return `<g class="linearization-path"><polyline points="${points.join(' ')}"/>${dots.join('')}</g>`;
}

function unplacedId(u: number | { id: number }): number {
  return typeof u === 'number' ? u : u.id;
}

function orderList(
  view: PartitionView,
  byId: ReadonlyMap<number, Operation>,
  order: Map<number, number>,
): string {
  const item = (entry: number | { id: number; reason?: string }) => {
    const id = unplacedId(entry);
    const op = byId.get(id);
    let text =
      op === undefined
        ? `op ${id}`
        : `${op.f} ${brief(op.input, 60)} → ${brief(op.output, 60)} (process ${op.process})`;
    if (typeof entry !== 'number' && entry.reason !== undefined) text += ` — ${entry.reason}`;
    return `<li data-op="${id}">${esc(text)}</li>`;
  };
  const lin = view.linearization ?? [];
  const complete = view.verdict === 'ok';
  const heading = complete
    ? `Linearization (${lin.length} operations)`
    : `Largest partial linearization (${lin.length} of ${byId.size} operations)`;
  const parts = [
    `<h4>${esc(heading)}</h4><ol class="linearization">${lin.slice(0, 2000).map(item).join('')}</ol>`,
  ];
  const unplaced = (view.unplaced ?? []).filter((u) => !order.has(unplacedId(u)));
  if (unplaced.length > 0) {
    parts.push(
      `<h4>Could not be placed next (${unplaced.length})</h4><ul class="unplaced-list">${unplaced.map(item).join('')}</ul>`,
    );
  }
  return `<details class="order"${complete ? '' : ' open'}><summary>Order</summary>${parts.join('')}</details>`;
}

function clip(text: string, width: number): string {
  const chars = Math.floor((width - 6) / 6.2);
  return text.length > chars ? `${text.slice(0, Math.max(1, chars - 1))}…` : text;
}
