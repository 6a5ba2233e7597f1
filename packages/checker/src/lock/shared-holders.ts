import type { HistoryEvent, ProcessId } from '../history/types.js';
import type { StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import { RESOURCE_PROCESS } from './events.js';
import { type LeaseWindow, leaseWindows } from './lease-history.js';
import { acceptedOf, clientOf, fenceOf, forEachResourceEvent, resourceKey } from './resource-log.js';

/**
 * What the semaphore and read-write lock checkers share: holders as intervals with a weight (the
 * permits a grant takes; a read-write lock is a semaphore of `MAX_PERMITS` units of which a reader takes
 * 1 and a writer all), read either from the resource's entries (`sem-enter`/`sem-leave`,
 * `rw-enter`/`rw-leave`) or from the clients' believed-valid lease windows (the lease check's reading).
 */

/** A read-write holder's mode; a semaphore holder has none. */
export type HolderMode = 'read' | 'write';

/** One holder's interval: [start, end), `end` = Infinity when it never ended. */
export interface Holding {
  key: string;
  /** The client's process id (resource view: `value.client`; beliefs: the grant's process). */
  process: ProcessId;
  /** The grant id (beliefs) or undefined (resource view, which knows clients, not grants). */
  grant?: string | undefined;
  fence?: string | undefined;
  permits: number;
  mode?: HolderMode | undefined;
  start: number;
  end: number;
  startIndex: number;
}

/** The figures every holder reading counts. */
export interface HoldingCounts {
  holders: number;
  /** Never ended: open to the end of the history. */
  open: number;
  /** A leave with no open entry of that client (its entry was refused, or the history is cut). */
  unmatchedLeaves: number;
  /** Entries the resource refused (stale fence): evidence the fence works. */
  refused: number;
}

/** `value[field]` as a whole number ≥ 1, `fallback` when absent. */
export function countIn(
  event: HistoryEvent,
  value: Record<string, unknown>,
  field: string,
  fallback: number | undefined,
): number | undefined {
  const raw = value[field];
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 1) return raw;
  throw new LockHistoryError(event.index, `"value.${field}" as a whole number of at least 1`, raw);
}

export function modeIn(event: HistoryEvent, value: Record<string, unknown>): HolderMode | undefined {
  const raw = value.mode;
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'read' || raw === 'write') return raw;
  throw new LockHistoryError(event.index, '"value.mode" as "read" or "write"', raw);
}

/**
 * The resource's holders: an accepted `<prefix>-enter` opens one for its client, the client's next
 * `<prefix>-leave` closes it. `weigh` reads the entry's weight and mode. An entry by a client already
 * inside is bad input (the workloads never re-enter), named by its index.
 */
export function resourceHoldings(
  history: Iterable<HistoryEvent>,
  prefix: 'sem' | 'rw',
  weigh: (event: HistoryEvent, value: Record<string, unknown>) => { permits: number; mode?: HolderMode },
  budget: StepBudget,
): { holdings: Holding[]; counts: HoldingCounts } {
  const enter = `${prefix}-enter` as const;
  const leave = `${prefix}-leave` as const;
  const inside = new Map<string, Map<ProcessId, Holding>>();
  const holdings: Holding[] = [];
  const counts: HoldingCounts = { holders: 0, open: 0, unmatchedLeaves: 0, refused: 0 };
  forEachResourceEvent(
    history,
    new Set([enter, leave]),
    (event) => {
      const key = resourceKey(event);
      const client = clientOf(event);
      let here = inside.get(key);
      if (here === undefined) {
        here = new Map();
        inside.set(key, here);
      }
      if (event.f === leave) {
        const holding = here.get(client);
        if (holding === undefined) counts.unmatchedLeaves++;
        else {
          holding.end = event.time;
          here.delete(client);
        }
        return;
      }
      const { permits, mode } = weigh(event, event.value as unknown as Record<string, unknown>);
      const fence = fenceOf(event)?.toString();
      if (!acceptedOf(event, true)) {
        counts.refused++;
        return;
      }
      if (here.has(client)) {
        throw new LockHistoryError(
          event.index,
          `a "${leave}" of client ${String(client)} before it enters again`,
        );
      }
      const holding: Holding = {
        key,
        process: client,
        fence,
        permits,
        mode,
        start: event.time,
        end: Number.POSITIVE_INFINITY,
        startIndex: event.index,
      };
      here.set(client, holding);
      holdings.push(holding);
    },
    budget,
  );
  counts.holders = holdings.length;
  for (const here of inside.values()) counts.open += here.size;
  return { holdings, counts };
}

/** What a grant's `ok` says beyond the lease facts: its permits, mode and the semaphore's limit. */
interface GrantShape {
  permits: number | undefined;
  mode: HolderMode | undefined;
  limit: number | undefined;
}

/**
 * The clients' believed-valid windows (as the lease check reads them, `leaseWindows`), each with the
 * permits and mode its grant's `ok` recorded (`value.permits`, `value.mode`). `defaultPermits` weighs a
 * grant that records none.
 */
export function believedHoldings(
  history: readonly HistoryEvent[],
  weigh: (window: LeaseWindow, shape: GrantShape, index: number) => { permits: number; mode?: HolderMode },
): { holdings: Holding[]; limits: { limit: number; index: number }[]; empty: number } {
  const shapes = new Map<string, GrantShape>();
  const limits: { limit: number; index: number }[] = [];
  for (const event of history) {
    if (event.type !== 'ok' || event.process === RESOURCE_PROCESS || event.process === 'nemesis') continue;
    const value = event.value;
    if (typeof value !== 'object' || value === null || !('validUntil' in value)) continue;
    const v = value as Record<string, unknown>;
    const grant = v.grant === undefined || v.grant === null ? `#${event.index}` : String(v.grant);
    const limit = countIn(event, v, 'limit', undefined);
    if (limit !== undefined) limits.push({ limit, index: event.index });
    shapes.set(grant, { permits: countIn(event, v, 'permits', undefined), mode: modeIn(event, v), limit });
  }
  const holdings: Holding[] = [];
  let empty = 0;
  for (const w of leaseWindows(history).windows) {
    if (w.end <= w.start) {
      empty++;
      continue;
    }
    const shape = shapes.get(w.grant) ?? { permits: undefined, mode: undefined, limit: undefined };
    const { permits, mode } = weigh(w, shape, w.grantIndex);
    holdings.push({
      key: w.key,
      process: w.process,
      grant: w.grant,
      fence: w.fence,
      permits,
      mode,
      start: w.start,
      end: w.end,
      startIndex: w.grantIndex,
    });
  }
  return { holdings, limits, empty };
}

/**
 * Holdings grouped by key, each group sorted by start (ties by index). An empty one (left at the instant
 * it entered) holds nothing at any instant of a half-open interval, and is left out.
 */
export function byKey(holdings: readonly Holding[]): Map<string, Holding[]> {
  const groups = new Map<string, Holding[]>();
  for (const h of holdings) {
    if (h.end <= h.start) continue;
    const list = groups.get(h.key);
    if (list) list.push(h);
    else groups.set(h.key, [h]);
  }
  for (const list of groups.values()) list.sort((a, b) => a.start - b.start || a.startIndex - b.startIndex);
  return groups;
}

/** "client 3 (fence 12, 2 permits)" or "grant c1.4 of process 3 (fence 12, read)". */
export function describeHolding(h: Holding): string {
  const who =
    h.grant === undefined
      ? `client ${String(h.process)}`
      : `grant ${h.grant} of process ${String(h.process)}`;
  const parts = [
    ...(h.fence === undefined ? [] : [`fence ${h.fence}`]),
    ...(h.mode === undefined ? [`${h.permits} permit${h.permits === 1 ? '' : 's'}`] : [h.mode]),
  ];
  return `${who} (${parts.join(', ')})`;
}
