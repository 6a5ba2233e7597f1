import type { HistoryEvent } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import { type ClientId, type EnterEvent, type LeaveEvent, RESOURCE_PROCESS } from './events.js';
import { acceptedOf, clientOf } from './resource-log.js';

/** A critical section as timed by the resource: from an accepted `enter` to the holder's `leave`. */
export interface CriticalSection {
  key: string;
  client: ClientId;
  fence?: string | undefined;
  start: number;
  /** `Infinity` when the holder never left: it may still be acting. */
  end: number;
  startIndex: number;
  endIndex?: number | undefined;
}

/** Two holders inside the same resource at once, during [from, to]. `first` entered first. */
export interface Overlap {
  kind: 'overlap';
  key: string;
  message: string;
  first: CriticalSection;
  second: CriticalSection;
  from: number;
  to: number;
}

export interface MutexStats {
  sections: number;
  overlaps: number;
  /** Enters the resource refused (stale fence): evidence the fence works. */
  refused: number;
  /** Sections never left, open to the end of the history. */
  open: number;
  /** A `leave` by a client with no open section (its enter was refused, or the history is cut). */
  unmatchedLeaves: number;
  /** An `enter` by a client already inside: counted, folded into the section it already holds. */
  reentries: number;
  resources: number;
}

export interface MutexCheckOptions extends BudgetOptions {
  /** Overlapping pairs kept in `violations` (all are counted in `stats.overlaps`). Default 1000. */
  maxViolations?: number;
}

export type MutexResult = CheckResult<Overlap, MutexStats>;

/**
 * Every critical section of a lock history and every pair of them that overlaps, in one sweep over the
 * resource's events in time order: O(n log n) for the sort (skipped when already ordered) plus O(n + k)
 * for k overlapping pairs, since a new section is compared only with those open when it starts.
 */
export function criticalSections(
  history: Iterable<HistoryEvent>,
  maxPairs = 0,
): { sections: CriticalSection[]; pairs: [CriticalSection, CriticalSection][]; stats: MutexStats } {
  return sweepHistory(history, true, maxPairs);
}

/**
 * Mutual exclusion as the resource saw it: no two clients' critical sections on one resource overlap.
 * `illegal` lists every overlapping pair (up to `maxViolations`) with both holders and their fences.
 */
export function checkMutex(history: Iterable<HistoryEvent>, options: MutexCheckOptions = {}): MutexResult {
  const max = options.maxViolations ?? 1000;
  if (!Number.isInteger(max) || max < 0) {
    throw new LockHistoryError(undefined, 'maxViolations to be a non-negative integer', max);
  }
  const { pairs, stats } = sweepHistory(history, false, max, new StepBudget(options.deadline));
  // Every enter is a section, a refusal or a re-entry; leaves alone (unmatched) judge nothing.
  if (stats.sections + stats.refused + stats.reentries === 0) {
    return nothingToCheck('no resource "enter" lines', stats);
  }
  // Ends are known only after the sweep, so the overlap windows are computed here.
  const violations = pairs.map(([first, second]): Overlap => {
    const to = Math.min(first.end, second.end);
    const holder = (s: CriticalSection) =>
      `client ${s.client}${s.fence === undefined ? '' : ` (fence ${s.fence})`}`;
    const span = Number.isFinite(to) ? `for ${formatNs(to - second.start)}` : 'to the end of the history';
    return {
      kind: 'overlap',
      key: first.key,
      message: `${holder(first)} and ${holder(second)} both inside ${span}`,
      first,
      second,
      from: second.start,
      to,
    };
  });
  return { verdict: stats.overlaps > 0 ? 'illegal' : 'ok', violations, stats };
}

/**
 * Sweeps the history in one pass when it is already in the resource's order (harness histories are
 * written that way), checking the order as it goes; at the first line out of order it starts again on
 * a sorted copy. This is the hot path for million-operation histories, so it avoids callbacks and
 * per-event allocation other than the sections themselves.
 */
function sweepHistory(
  history: Iterable<HistoryEvent>,
  keepSections: boolean,
  maxPairs: number,
  budget = new StepBudget(undefined),
) {
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  const inOrder = new SectionSweep(keepSections, maxPairs, budget);
  if (inOrder.run(all, true)) return inOrder.finish();
  const picked = all.filter(isSectionEvent);
  picked.sort((a, b) => a.time - b.time || a.index - b.index);
  const sorted = new SectionSweep(keepSections, maxPairs, budget);
  sorted.run(picked, false);
  return sorted.finish();
}

/** A duration in the history's nanoseconds, for messages. */
function formatNs(ns: number): string {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns} ns`;
}

function isSectionEvent(event: HistoryEvent): boolean {
  return event.process === RESOURCE_PROCESS && (event.f === 'enter' || event.f === 'leave');
}

class SectionSweep {
  readonly sections: CriticalSection[] = [];
  readonly pairs: [CriticalSection, CriticalSection][] = [];
  readonly stats: MutexStats = {
    sections: 0,
    overlaps: 0,
    refused: 0,
    open: 0,
    unmatchedLeaves: 0,
    reentries: 0,
    resources: 0,
  };
  readonly #inside = new Map<string, Map<ClientId, CriticalSection>>();
  // One resource is the common case: its holders stay at hand instead of a map lookup per event.
  #key: string | undefined;
  #holders = new Map<ClientId, CriticalSection>();

  constructor(
    readonly keepSections: boolean,
    readonly maxPairs: number,
    readonly budget: StepBudget,
  ) {}

  /** Feeds the section events of `events`; false (and stops) at the first one out of time order. */
  run(events: readonly HistoryEvent[], checkOrder: boolean): boolean {
    let lastTime = Number.NEGATIVE_INFINITY;
    let lastIndex = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      this.budget.tick();
      if (event.process !== RESOURCE_PROCESS) continue;
      const f = event.f;
      if (f !== 'enter' && f !== 'leave') continue;
      const time = event.time;
      if (typeof time !== 'number' || Number.isNaN(time)) {
        throw new LockHistoryError(event.index, 'a numeric "time"', time);
      }
      if (checkOrder) {
        if (time < lastTime || (time === lastTime && event.index < lastIndex)) return false;
        lastTime = time;
        lastIndex = event.index;
      }
      if (typeof event.value !== 'object' || event.value === null) {
        throw new LockHistoryError(event.index, `an object "value" for a resource "${f}"`, event.value);
      }
      this.#step(event as EnterEvent | LeaveEvent);
    }
    return true;
  }

  #step(event: EnterEvent | LeaveEvent): void {
    const key = event.key ?? '';
    const client = clientOf(event);
    if (key !== this.#key) {
      let found = this.#inside.get(key);
      if (found === undefined) {
        found = new Map();
        this.#inside.set(key, found);
      }
      this.#holders = found;
      this.#key = key;
    }
    const holders = this.#holders;
    if (event.f === 'leave') {
      const section = holders.get(client);
      if (section === undefined) {
        this.stats.unmatchedLeaves++;
        return;
      }
      section.end = event.time;
      section.endIndex = event.index;
      holders.delete(client);
      return;
    }
    if (!acceptedOf(event)) {
      this.stats.refused++;
      return;
    }
    if (holders.has(client)) {
      this.stats.reentries++;
      return;
    }
    const fence = event.value.fence;
    // Every field is set here, in one order, so all sections share one hidden class.
    const section: CriticalSection = {
      key,
      client,
      fence: fence === undefined || fence === null ? undefined : String(fence),
      start: event.time,
      end: Number.POSITIVE_INFINITY,
      startIndex: event.index,
      endIndex: undefined,
    };
    if (holders.size > 0) {
      // Counted at once: 60 000 open enters are 1.8e9 pairs, listed only up to maxPairs.
      this.stats.overlaps += holders.size;
      if (this.pairs.length < this.maxPairs) {
        for (const other of holders.values()) {
          if (this.pairs.length >= this.maxPairs) break;
          this.pairs.push([other, section]);
        }
      }
    }
    holders.set(client, section);
    this.stats.sections++;
    if (this.keepSections) this.sections.push(section);
  }

  finish() {
    for (const open of this.#inside.values()) this.stats.open += open.size;
    this.stats.resources = this.#inside.size;
    return { sections: this.sections, pairs: this.pairs, stats: this.stats };
  }
}
