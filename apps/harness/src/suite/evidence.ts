import type { Verdict } from '@fencekit/checker';

/**
 * Evidence per cell of the matrix (backend × workload × fault × fencing), over the seeds run in it: how often the
 * checkers convicted, with a 95 % Wilson score interval, and how soon.
 *
 * Why Wilson: a cell is a handful of seeds, often with 0 or all convictions, where the normal
 * approximation gives an interval of width 0 ("0 of 20, so never") and can leave [0, 1]. Wilson's stays
 * inside [0, 1] and still says how little 20 clean seeds prove (0 of 20: up to 16 %).
 */

/** z for a two-sided 95 % interval. */
export const Z_95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/** The Wilson score interval for `successes` out of `trials` (undefined without trials: nothing is known). */
export function wilsonInterval(successes: number, trials: number, z = Z_95): Interval | undefined {
  if (!Number.isInteger(trials) || trials < 0)
    throw new RangeError(`trials must be a whole number ≥ 0, got ${trials}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > trials) {
    throw new RangeError(`successes must be a whole number in [0, ${trials}], got ${successes}`);
  }
  if (trials === 0) return undefined;
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  // At 0 or all successes the bound is exactly 0 or 1; rounding must not push it past.
  return {
    low: successes === 0 ? 0 : Math.max(0, centre - half),
    high: successes === trials ? 1 : Math.min(1, centre + half),
  };
}

/** The median of the values (the mean of the middle two for an even count); undefined when empty. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** What a cell needs from one run. */
export interface RunEvidence {
  verdict: Verdict;
  /** Harness time from the run's start to its first violation (see `RunFigures.firstViolationMs`). */
  firstViolationMs: number | null | undefined;
}

export interface CellEvidence {
  /** Runs in the cell. */
  runs: number;
  /** Runs the checkers decided (ok or illegal): the trials of the rate. */
  judged: number;
  /** Runs judged illegal. */
  convicted: number;
  /** Runs left unknown (incomplete history, a checker out of time): counted neither way. */
  unknown: number;
  /** convicted / judged, undefined when nothing was judged. */
  rate: number | undefined;
  /** 95 % Wilson score interval of the rate. */
  interval: Interval | undefined;
  /** Median over the convicted runs that carry it (older runs do not); undefined when none do. */
  medianFirstViolationMs: number | undefined;
  /** How many convicted runs the median is taken over. */
  timedConvictions: number;
}

export function cellEvidence(runs: readonly RunEvidence[]): CellEvidence {
  const convictedRuns = runs.filter((r) => r.verdict === 'illegal');
  const judged = runs.filter((r) => r.verdict === 'ok' || r.verdict === 'illegal').length;
  const times = convictedRuns
    .map((r) => r.firstViolationMs)
    .filter((t): t is number => typeof t === 'number' && Number.isFinite(t));
  return {
    runs: runs.length,
    judged,
    convicted: convictedRuns.length,
    unknown: runs.length - judged,
    rate: judged > 0 ? convictedRuns.length / judged : undefined,
    interval: wilsonInterval(convictedRuns.length, judged),
    medianFirstViolationMs: median(times),
    timedConvictions: times.length,
  };
}

/** "3/20 (15 %, 95 % CI 5–36 %)": the cell's figures in one line, for the site and the CLI. */
export function describeEvidence(
  cell: Pick<CellEvidence, 'runs' | 'judged' | 'convicted'> & {
    rate: number | null | undefined;
    interval: Interval | null | undefined;
  },
): string {
  if (cell.judged === 0) return `0 judged of ${cell.runs}`;
  const pct = (x: number) => `${Math.round(x * 100)}`;
  const ci = cell.interval ? `, 95 % CI ${pct(cell.interval.low)}–${pct(cell.interval.high)} %` : '';
  return `${cell.convicted}/${cell.judged} (${pct(cell.rate ?? 0)} %${ci})`;
}

/**
 * The matrix cell a run belongs to: backend × workload × fault (or scenario) × fencing. The workload is
 * part of it: different workloads meet the same fault with different exposure (cas has no lock to lose,
 * cron never waits), so pooling their seeds would blend rates that mean different things.
 */
export interface Cell {
  backend: string;
  workload: string;
  /** "kill + pause-client", "scenario: gc-pause" or "no faults". */
  faults: string;
  fencing: boolean;
}

export function cellOf(meta: {
  backend: string;
  workload: string;
  faults: readonly string[];
  scenario: string | null;
  fencing: boolean;
}): Cell {
  const faults = meta.scenario ? `scenario: ${meta.scenario}` : meta.faults.join(' + ') || 'no faults';
  return { backend: meta.backend, workload: meta.workload, faults, fencing: meta.fencing };
}

export const cellKey = (cell: Cell): string =>
  `${cell.backend}|${cell.workload}|${cell.faults}|${cell.fencing ? 'on' : 'off'}`;

/** How `firstViolationMs` is measured, said once for the site and results.json. */
export const FIRST_VIOLATION_MEASURE =
  'harness time from the moment the clients were told to start to the earliest violation the checkers ' +
  'placed on the timeline (an overlap’s start, a stale or lost write’s event), on the history’s one ' +
  'monotonic clock; the median is over the convicted runs of the cell';
