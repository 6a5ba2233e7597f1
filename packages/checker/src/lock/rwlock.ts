import type { HistoryEvent, ProcessId } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import { formatNs } from './lease.js';
import { leaseWindows } from './lease-history.js';
import { acceptedOf, clientOf, fenceOf, forEachResourceEvent, resourceKey } from './resource-log.js';
import {
  believedHoldings,
  byKey,
  describeHolding,
  type HolderMode,
  type Holding,
  modeIn,
  resourceHoldings,
} from './shared-holders.js';

/**
 * - `writer-overlap`: a writer and another holder (reader or writer) on one resource at once during
 *   [from, to), by the resource's entries (`view: 'resource'`) or the clients' believed-valid grants
 *   (`view: 'beliefs'`).
 * - `superseded-read`: the resource served a read (`rw-read`, accepted) to a reader whose fence is below
 *   the fence of a write it had already accepted: a writer granted after that reader (write fences exceed
 *   every earlier grant) had superseded what the reader was entitled to see.
 * - `stale-write`: the resource accepted a write (`rw-write`) whose fence is below the fence of a holder
 *   that had already entered: a lapsed writer's write landed after a later grant acted.
 */
export type ReadWriteViolation =
  | {
      kind: 'writer-overlap';
      view: 'resource' | 'beliefs';
      key: string;
      message: string;
      first: Holding;
      second: Holding;
      from: number;
      to: number;
      processes: [ProcessId, ProcessId];
    }
  | {
      kind: 'superseded-read' | 'stale-write';
      key: string;
      message: string;
      index: number;
      client: ProcessId;
      fence: string;
      /** The higher fence already seen: the superseding write's, or the later holder's. */
      above: string;
      aboveIndex: number;
    };

export interface ReadWriteStats {
  /** Holders counted: the resource's accepted entries, or the grants with a non-empty window. */
  holders: number;
  readers: number;
  writers: number;
  writerOverlaps: number;
  /**
   * Resource view with `fencing`: overlaps excused because the later holder carried a higher fence and
   * entered after the earlier one's believed lease had ended (the fence, not the lock, then protects).
   */
  overlapsPastLease: number;
  /** Reads and writes the resource refused for a stale fence: evidence the fence works. */
  staleRefused: number;
  supersededReads: number;
  staleWrites: number;
  /** Accesses without a fence, which the fence rules cannot judge. */
  unfenced: number;
  open: number;
  resources: number;
}

export interface ReadWriteCheckOptions extends BudgetOptions {
  /**
   * The resource refused stale fences in this run: an overlap whose later holder has a higher fence and
   * entered after the earlier holder's believed lease ended is excused (counted in `overlapsPastLease`);
   * what the earlier holder did with its lapsed grant is then judged by `superseded-read` / `stale-write`.
   */
  fencing?: boolean;
  /** Violations kept (all are counted). Default 1000. */
  maxViolations?: number;
}

export type ReadWriteResult = CheckResult<ReadWriteViolation, ReadWriteStats>;

const emptyStats = (): ReadWriteStats => ({
  holders: 0,
  readers: 0,
  writers: 0,
  writerOverlaps: 0,
  overlapsPastLease: 0,
  staleRefused: 0,
  supersededReads: 0,
  staleWrites: 0,
  unfenced: 0,
  open: 0,
  resources: 0,
});

/**
 * "Many readers or one writer" as the protected resource saw it (`rw-enter` with `value.mode` to the
 * client's `rw-leave`): no writer's stretch inside overlaps another holder's; and, wherever accesses
 * carry fences (fencing on or off), no read served under a fence a later writer had superseded, and no
 * write accepted below a fence that had already entered.
 */
export function checkReadWriteLock(
  history: Iterable<HistoryEvent>,
  options: ReadWriteCheckOptions = {},
): ReadWriteResult {
  const max = maxViolationsOf(options);
  const budget = new StepBudget(options.deadline);
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  const { holdings, counts } = resourceHoldings(
    all,
    'rw',
    (event, value) => {
      const mode = modeIn(event, value);
      if (mode === undefined)
        throw new LockHistoryError(event.index, '"value.mode" on a resource "rw-enter"');
      return { permits: 1, mode };
    },
    budget,
  );
  const stats = emptyStats();
  stats.holders = counts.holders;
  stats.open = counts.open;
  stats.staleRefused = counts.refused;
  if (counts.holders + counts.refused === 0) return nothingToCheck('no resource "rw-enter" lines', stats);
  const violations: ReadWriteViolation[] = [];
  const believedEnd = options.fencing ? believedEnds(all) : undefined;
  writerOverlaps(holdings, 'resource', stats, violations, max, budget, believedEnd);
  fenceRules(all, stats, violations, max, budget);
  const convicted = stats.writerOverlaps + stats.supersededReads + stats.staleWrites;
  return { verdict: convicted > 0 ? 'illegal' : 'ok', violations, stats };
}

/**
 * "Many readers or one writer" by the clients' own beliefs: no write grant is believed valid while any
 * other grant of the same lock is (each window as the lease check reads it; the mode from the grant's
 * `ok`, `value.mode`, which every grant must record). The lock's own promise, fencing or not.
 */
export function checkReadWriteLeases(
  history: Iterable<HistoryEvent>,
  options: ReadWriteCheckOptions = {},
): ReadWriteResult {
  const max = maxViolationsOf(options);
  const budget = new StepBudget(options.deadline);
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  const believed = believedHoldings(all, (window, shape, index) => {
    if (shape.mode === undefined) {
      throw new LockHistoryError(index, `"value.mode" ("read" or "write") on grant ${window.grant}`);
    }
    return { permits: 1, mode: shape.mode };
  });
  const stats = emptyStats();
  stats.holders = believed.holdings.length;
  stats.open = believed.holdings.filter((h) => !Number.isFinite(h.end)).length;
  if (believed.holdings.length + believed.empty === 0) {
    return nothingToCheck('no read-write grants (ok events with value.validUntil)', stats);
  }
  const violations: ReadWriteViolation[] = [];
  writerOverlaps(believed.holdings, 'beliefs', stats, violations, max, budget, undefined);
  return { verdict: stats.writerOverlaps > 0 ? 'illegal' : 'ok', violations, stats };
}

function maxViolationsOf(options: ReadWriteCheckOptions): number {
  const max = options.maxViolations ?? 1000;
  if (!Number.isInteger(max) || max < 0) {
    throw new LockHistoryError(undefined, 'maxViolations to be a non-negative integer', max);
  }
  return max;
}

/**
 * The grants' believed windows by holder and fence, each list in grant order. One fence may name several
 * grants of one holder: a Redis restarted without persistence counts fences from 1 again.
 */
function believedEnds(history: readonly HistoryEvent[]): Map<string, { start: number; end: number }[]> {
  const ends = new Map<string, { start: number; end: number }[]>();
  for (const w of leaseWindows(history).windows) {
    if (w.fence === undefined) continue;
    const key = `${String(w.process)} ${w.fence}`;
    const list = ends.get(key);
    if (list) list.push({ start: w.start, end: w.end });
    else ends.set(key, [{ start: w.start, end: w.end }]);
  }
  for (const list of ends.values()) list.sort((a, b) => a.start - b.start);
  return ends;
}

/** Sorted sweep per resource: each new holder against those still inside. O(n log n + k). */
function writerOverlaps(
  holdings: readonly Holding[],
  view: 'resource' | 'beliefs',
  stats: ReadWriteStats,
  violations: ReadWriteViolation[],
  max: number,
  budget: StepBudget,
  believedEnd: Map<string, { start: number; end: number }[]> | undefined,
): void {
  const groups = byKey(holdings);
  stats.resources = groups.size;
  for (const list of groups.values()) {
    let active: Holding[] = [];
    for (const h of list) {
      budget.tick();
      if (h.mode === 'write') stats.writers++;
      else stats.readers++;
      active = active.filter((a) => a.end > h.start);
      for (const a of active) {
        if (a.mode !== 'write' && h.mode !== 'write') continue;
        if (believedEnd !== undefined && protectedByFence(a, h, believedEnd)) {
          stats.overlapsPastLease++;
          continue;
        }
        stats.writerOverlaps++;
        if (violations.length < max) violations.push(overlap(a, h, view));
      }
      active.push(h);
    }
  }
}

/**
 * The later holder entered with a higher fence after the earlier one's believed lease had ended: the
 * earlier holder's grant is its latest one with that fence granted before it entered.
 */
function protectedByFence(
  first: Holding,
  second: Holding,
  believed: Map<string, { start: number; end: number }[]>,
): boolean {
  if (first.fence === undefined || second.fence === undefined) return false;
  if (BigInt(second.fence) <= BigInt(first.fence)) return false;
  const grants = believed.get(`${String(first.process)} ${first.fence}`) ?? [];
  const grant = grants.findLast((g) => g.start <= first.start);
  return grant !== undefined && second.start >= grant.end;
}

function overlap(first: Holding, second: Holding, view: 'resource' | 'beliefs'): ReadWriteViolation {
  const to = Math.min(first.end, second.end);
  const span = Number.isFinite(to) ? `for ${formatNs(to - second.start)}` : 'to the end of the history';
  const where = view === 'resource' ? 'both inside the resource' : 'both believed valid';
  return {
    kind: 'writer-overlap',
    view,
    key: first.key,
    message: `${describeHolding(first)} and ${describeHolding(second)} ${where} ${span}`,
    first,
    second,
    from: second.start,
    to,
    processes: [first.process, second.process],
  };
}

interface Highest {
  fence: bigint;
  index: number;
}

/**
 * The fence rules, in the resource's order per resource: a read accepted below the highest accepted
 * write fence is `superseded-read`; a write accepted below the highest fence that entered (either mode)
 * is `stale-write`. Accesses without a fence are counted, not judged.
 */
function fenceRules(
  history: readonly HistoryEvent[],
  stats: ReadWriteStats,
  violations: ReadWriteViolation[],
  max: number,
  budget: StepBudget,
): void {
  const lastWrite = new Map<string, Highest>();
  const entered = new Map<string, Highest>();
  const raise = (map: Map<string, Highest>, key: string, fence: bigint, index: number) => {
    const top = map.get(key);
    if (top === undefined || fence > top.fence) map.set(key, { fence, index });
  };
  forEachResourceEvent(
    history,
    FENCED_KINDS,
    (event) => {
      const client = clientOf(event);
      const fence = fenceOf(event);
      const accepted = acceptedOf(event, true);
      const key = resourceKey(event);
      if (fence === undefined) {
        if (event.f !== 'rw-enter') stats.unfenced++;
        return;
      }
      if (event.f === 'rw-enter') {
        if (accepted) raise(entered, key, fence, event.index);
        return;
      }
      if (!accepted) {
        // Counted with the refused entries: a stale access the resource kept out.
        stats.staleRefused++;
        return;
      }
      const above = event.f === 'rw-read' ? lastWrite.get(key) : entered.get(key);
      if (above !== undefined && fence < above.fence) {
        const kind = event.f === 'rw-read' ? 'superseded-read' : 'stale-write';
        if (kind === 'superseded-read') stats.supersededReads++;
        else stats.staleWrites++;
        if (violations.length < max) {
          violations.push({
            kind,
            key,
            message:
              kind === 'superseded-read'
                ? `read by client ${String(client)} with fence ${fence} served after a write with fence ${above.fence} (event ${above.index}) had superseded it`
                : `write by client ${String(client)} with fence ${fence} accepted after fence ${above.fence} had entered (event ${above.index})`,
            index: event.index,
            client,
            fence: fence.toString(),
            above: above.fence.toString(),
            aboveIndex: above.index,
          });
        }
      }
      if (event.f === 'rw-write') raise(lastWrite, key, fence, event.index);
    },
    budget,
  );
}

const FENCED_KINDS: ReadonlySet<'rw-enter' | 'rw-read' | 'rw-write'> = new Set([
  'rw-enter',
  'rw-read',
  'rw-write',
]);

export type { HolderMode };
