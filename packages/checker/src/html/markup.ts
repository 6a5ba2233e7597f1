import { showValue } from '../history/show.js';

/**
 * Text or attribute value made safe for HTML and inline SVG. Control characters (a NUL in a key, C1
 * controls) are not allowed in HTML text and some are dropped or replaced by browsers, so two keys
 * could look alike: they are written as visible `\u0000` escapes, as JSON would write them.
 */
export function esc(value: unknown): string {
  return String(value)
    .replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c)
    .replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** JSON that can sit inside a <script> element: `<` is escaped so no `</script>` can end it early. */
export function inlineJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A compact one-line rendering of any value for labels and tooltips, clipped to `max` characters. */
export function brief(value: unknown, max = 120): string {
  let text: string;
  if (value === undefined) text = '';
  else if (typeof value === 'string') text = value;
  else text = showValue(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Maps history times onto the x axis of a timeline drawing. */
export class TimeAxis {
  readonly min: number;
  readonly max: number;
  constructor(
    min: number,
    max: number,
    readonly left: number,
    readonly width: number,
  ) {
    this.min = Number.isFinite(min) ? min : 0;
    // A history of one instant still needs a visible span.
    this.max = Number.isFinite(max) && max > this.min ? max : this.min + 1;
  }

  /** x of time `t`; unknown ends (Infinity) are drawn to the right edge. */
  x(t: number): number {
    const clamped = Math.min(Math.max(t, this.min), this.max);
    return this.left + ((clamped - this.min) / (this.max - this.min)) * this.width;
  }

  /** Width of [from, to], at least 2px so instants stay visible. */
  span(from: number, to: number): number {
    return Math.max(2, this.x(to) - this.x(from));
  }
}

/** Time range of a set of intervals, ignoring unknown (infinite) ends. */
export function timeRange(points: Iterable<number>): { min: number; max: number } {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const t of points) {
    if (!Number.isFinite(t)) continue;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return { min, max };
}

/** Human text for a duration in the history's unit (ns for harness histories). */
export function formatTime(t: number, unit: 'ns' | 'index'): string {
  if (!Number.isFinite(t)) return '∞';
  if (unit === 'index') return String(t);
  const abs = Math.abs(t);
  if (abs >= 1e9) return `${(t / 1e9).toFixed(3)} s`;
  if (abs >= 1e6) return `${(t / 1e6).toFixed(3)} ms`;
  if (abs >= 1e3) return `${(t / 1e3).toFixed(1)} µs`;
  return `${t} ns`;
}

/** Orders lane labels: numeric process ids numerically, then names alphabetically. */
export function compareLabels(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  if (Number.isFinite(na) !== Number.isFinite(nb)) return Number.isFinite(na) ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
