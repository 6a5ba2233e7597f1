import type { HistoryEvent, ProcessId } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import { formatNs } from './lease.js';
import {
  believedHoldings,
  byKey,
  countIn,
  describeHolding,
  type Holding,
  resourceHoldings,
} from './shared-holders.js';

/**
 * More than the semaphore's permits held at once on one resource, during [from, to): `peak` permits at
 * the worst instant, by `holders` (those holding when the count first passed `limit`). `view` says whose
 * account it is: the resource's entries (`resource`), or the clients' believed-valid grants (`beliefs`).
 */
export interface SemaphoreViolation {
  kind: 'over-capacity';
  view: 'resource' | 'beliefs';
  key: string;
  message: string;
  limit: number;
  peak: number;
  from: number;
  to: number;
  holders: Holding[];
  /** The holders' processes, for drawing (one lane each). */
  processes: ProcessId[];
}

export interface SemaphoreStats {
  /** Holders counted: the resource's accepted entries, or the grants with a non-empty window. */
  holders: number;
  /** The most permits held at one instant, over all resources. */
  maxHeld: number;
  /** Stretches during which more than `limit` permits were held. */
  overCapacity: number;
  /** Resource view: entries never left; beliefs: windows never ended. */
  open: number;
  /** Resource view: leaves with no open entry. */
  unmatchedLeaves: number;
  /** Beliefs: grants whose window was empty (ended before the client learnt of it). */
  emptyWindows: number;
  resources: number;
}

export interface SemaphoreCheckOptions extends BudgetOptions {
  /** The semaphore's permits. Default: the `value.limit` the history records (which must agree). */
  permits?: number;
  /** Violations kept (all are counted). Default 1000. */
  maxViolations?: number;
}

export type SemaphoreResult = CheckResult<SemaphoreViolation, SemaphoreStats>;

/**
 * "At most N at a time" as the protected resource saw it: the permits of the clients inside (from each
 * accepted `sem-enter`, weighing `value.permits`, default 1, to that client's `sem-leave`) never exceed
 * the semaphore's `limit` on one resource. No fence can excuse an excess: a semaphore's fence orders
 * grants but cannot tell a lapsed holder from one of the N valid ones, so a resource cannot refuse it.
 */
export function checkSemaphore(
  history: Iterable<HistoryEvent>,
  options: SemaphoreCheckOptions = {},
): SemaphoreResult {
  const max = maxViolationsOf(options);
  const budget = new StepBudget(options.deadline);
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  const limits = new Limits(options.permits);
  const { holdings, counts } = resourceHoldings(
    all,
    'sem',
    (event, value) => {
      limits.note(event.key ?? '', countIn(event, value, 'limit', undefined), event.index);
      return { permits: countIn(event, value, 'permits', 1) as number };
    },
    budget,
  );
  const stats: SemaphoreStats = {
    holders: counts.holders,
    maxHeld: 0,
    overCapacity: 0,
    open: counts.open,
    unmatchedLeaves: counts.unmatchedLeaves,
    emptyWindows: 0,
    resources: 0,
  };
  if (counts.holders + counts.refused === 0) return nothingToCheck('no resource "sem-enter" lines', stats);
  const violations = overCapacity(holdings, limits, 'resource', stats, max, budget);
  return { verdict: stats.overCapacity > 0 ? 'illegal' : 'ok', violations, stats };
}

/**
 * "At most N at a time" by the clients' own beliefs: the permits of the grants believed valid at one
 * instant (each grant's window as the lease check reads it: from its `ok` to its release, `held` seen
 * false, or its latest `validUntil`; weighing the `ok`'s `value.permits`, default 1) never exceed the
 * semaphore's `limit`. This is the semaphore's own promise, fencing or not; the resource's count
 * (`checkSemaphore`) can exceed it where a holder acts past its lease.
 */
export function checkSemaphoreLeases(
  history: Iterable<HistoryEvent>,
  options: SemaphoreCheckOptions = {},
): SemaphoreResult {
  const max = maxViolationsOf(options);
  const budget = new StepBudget(options.deadline);
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  const limits = new Limits(options.permits);
  const believed = believedHoldings(all, (window, shape, index) => {
    limits.note(window.key, shape.limit, index);
    return { permits: shape.permits ?? 1 };
  });
  const stats: SemaphoreStats = {
    holders: believed.holdings.length,
    maxHeld: 0,
    overCapacity: 0,
    open: believed.holdings.filter((h) => !Number.isFinite(h.end)).length,
    unmatchedLeaves: 0,
    emptyWindows: believed.empty,
    resources: 0,
  };
  if (believed.holdings.length + believed.empty === 0) {
    return nothingToCheck('no semaphore grants (ok events with value.validUntil)', stats);
  }
  const violations = overCapacity(believed.holdings, limits, 'beliefs', stats, max, budget);
  return { verdict: stats.overCapacity > 0 ? 'illegal' : 'ok', violations, stats };
}

function maxViolationsOf(options: SemaphoreCheckOptions): number {
  const max = options.maxViolations ?? 1000;
  if (!Number.isInteger(max) || max < 0) {
    throw new LockHistoryError(undefined, 'maxViolations to be a non-negative integer', max);
  }
  if (options.permits !== undefined && !(Number.isSafeInteger(options.permits) && options.permits >= 1)) {
    throw new LockHistoryError(undefined, 'permits to be a whole number of at least 1', options.permits);
  }
  return max;
}

/** The semaphore's limit per resource: the option, else what the history records, which must agree. */
class Limits {
  readonly #seen = new Map<string, { limit: number; index: number }>();
  constructor(readonly fixed: number | undefined) {}

  note(key: string, limit: number | undefined, index: number): void {
    if (this.fixed !== undefined || limit === undefined) return;
    const seen = this.#seen.get(key);
    if (seen === undefined) this.#seen.set(key, { limit, index });
    else if (seen.limit !== limit) {
      throw new LockHistoryError(
        index,
        `the semaphore's limit recorded at event ${seen.index} (${seen.limit}) on every event of one resource`,
        limit,
      );
    }
  }

  of(key: string): number {
    const limit = this.fixed ?? this.#seen.get(key)?.limit;
    if (limit === undefined) {
      throw new LockHistoryError(
        undefined,
        `the semaphore's permits for resource "${key}" (value.limit on its events, or the permits option)`,
      );
    }
    return limit;
  }
}

/**
 * One sweep per resource over the holders' starts and ends (ends first at equal times: intervals are
 * half-open), recording each stretch where the permits held pass the limit. O(n log n).
 */
function overCapacity(
  holdings: readonly Holding[],
  limits: Limits,
  view: 'resource' | 'beliefs',
  stats: SemaphoreStats,
  max: number,
  budget: StepBudget,
): SemaphoreViolation[] {
  const violations: SemaphoreViolation[] = [];
  const groups = byKey(holdings);
  stats.resources = groups.size;
  for (const [key, list] of groups) {
    const limit = limits.of(key);
    const points: { time: number; delta: 1 | -1; holding: Holding }[] = [];
    for (const h of list) {
      points.push({ time: h.start, delta: 1, holding: h });
      if (Number.isFinite(h.end)) points.push({ time: h.end, delta: -1, holding: h });
    }
    points.sort(
      (a, b) => a.time - b.time || a.delta - b.delta || a.holding.startIndex - b.holding.startIndex,
    );
    const active = new Set<Holding>();
    let held = 0;
    let episode: SemaphoreViolation | undefined;
    for (const point of points) {
      budget.tick();
      if (point.delta === 1) active.add(point.holding);
      else active.delete(point.holding);
      held += point.delta * point.holding.permits;
      if (held > stats.maxHeld) stats.maxHeld = held;
      if (held > limit && episode === undefined) {
        const holders = [...active];
        episode = {
          kind: 'over-capacity',
          view,
          key,
          message: '',
          limit,
          peak: held,
          from: point.time,
          to: Number.POSITIVE_INFINITY,
          holders,
          processes: [...new Set(holders.map((h) => h.process))],
        };
      } else if (episode !== undefined && held > episode.peak) episode.peak = held;
      if (episode !== undefined && held <= limit) {
        episode.to = point.time;
        stats.overCapacity++;
        if (violations.length < max) violations.push(finish(episode));
        episode = undefined;
      }
    }
    if (episode !== undefined) {
      stats.overCapacity++;
      if (violations.length < max) violations.push(finish(episode));
    }
  }
  return violations;
}

function finish(v: SemaphoreViolation): SemaphoreViolation {
  const span = Number.isFinite(v.to) ? `for ${formatNs(v.to - v.from)}` : 'to the end of the history';
  const whose = v.view === 'resource' ? 'inside the resource' : 'believed valid';
  v.message =
    `${v.peak} permits ${whose} at once (limit ${v.limit}) ${span}: ` +
    v.holders.map(describeHolding).join(', ');
  return v;
}
