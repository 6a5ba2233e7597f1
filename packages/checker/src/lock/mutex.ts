import type { HistoryEvent } from '../history/types.js';
import type { CheckResult } from '../verdict.js';
import { LockHistoryError } from './errors.js';
import type { ClientId } from './events.js';
import { acceptedOf, clientOf, forEachResourceEvent, resourceKey } from './resource-log.js';

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

export interface MutexCheckOptions {
  /** Overlapping pairs kept in `violations` (all are counted in `stats.overlaps`). Default 1000. */
  maxViolations?: number;
}

export type MutexResult = CheckResult<Overlap, MutexStats>;

const KINDS: ReadonlySet<'enter' | 'leave'> = new Set(['enter', 'leave']);

/**
 * Every critical section of a lock history and every pair of them that overlaps, in one sweep over the
 * resource's events in time order: O(n log n) for the sort (skipped when already ordered) plus O(n + k)
 * for k overlapping pairs, since a new section is compared only with those open when it starts.
 */
export function criticalSections(
  history: Iterable<HistoryEvent>,
  onOverlap: (first: CriticalSection, second: CriticalSection) => void = () => {},
): { sections: CriticalSection[]; stats: MutexStats } {
  const sections: CriticalSection[] = [];
  const stats = sweep(history, onOverlap, (s) => sections.push(s));
  return { sections, stats };
}

function sweep(
  history: Iterable<HistoryEvent>,
  onOverlap: (first: CriticalSection, second: CriticalSection) => void,
  onSection?: (section: CriticalSection) => void,
): MutexStats {
  const inside = new Map<string, Map<ClientId, CriticalSection>>();
  const stats: MutexStats = {
    sections: 0,
    overlaps: 0,
    refused: 0,
    open: 0,
    unmatchedLeaves: 0,
    reentries: 0,
    resources: 0,
  };
  // One resource is the common case: keep its holders at hand instead of a map lookup per event.
  let lastKey: string | undefined;
  let holders = new Map<ClientId, CriticalSection>();

  forEachResourceEvent(history, KINDS, (event) => {
    const key = resourceKey(event);
    const client = clientOf(event);
    if (key !== lastKey) {
      let found = inside.get(key);
      if (found === undefined) {
        found = new Map();
        inside.set(key, found);
      }
      holders = found;
      lastKey = key;
    }
    if (event.f === 'enter') {
      if (!acceptedOf(event)) {
        stats.refused++;
        return;
      }
      if (holders.has(client)) {
        stats.reentries++;
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
        for (const other of holders.values()) {
          stats.overlaps++;
          onOverlap(other, section);
        }
      }
      holders.set(client, section);
      stats.sections++;
      onSection?.(section);
    } else {
      const section = holders.get(client);
      if (section === undefined) {
        stats.unmatchedLeaves++;
        return;
      }
      section.end = event.time;
      section.endIndex = event.index;
      holders.delete(client);
    }
  });
  for (const open of inside.values()) stats.open += open.size;
  stats.resources = inside.size;
  return stats;
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
  const pairs: [CriticalSection, CriticalSection][] = [];
  const stats = sweep(history, (first, second) => {
    if (pairs.length < max) pairs.push([first, second]);
  });
  // Ends are known only after the sweep, so the overlap windows are computed here.
  const violations = pairs.map(
    ([first, second]): Overlap => ({
      kind: 'overlap',
      key: first.key,
      first,
      second,
      from: second.start,
      to: Math.min(first.end, second.end),
    }),
  );
  return { verdict: stats.overlaps > 0 ? 'illegal' : 'ok', violations, stats };
}
