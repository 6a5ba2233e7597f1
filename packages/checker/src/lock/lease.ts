import type { HistoryEvent, ProcessId } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { LockHistoryError } from './errors.js';
import { type LeaseFactOptions, type LeaseWindow, leaseWindows } from './lease-history.js';

/**
 * - `overlap`: two grants on one resource were both believed valid during [from, to). `firstLeftNs` /
 *   `secondLeftNs` = how much validity each believed it had left at `from`.
 * - `expired-grant`: a grant handed out with its `validUntil` already past when the client first read
 *   it (judged only where the grant records `at`, the instant of that read).
 * - `validity-past-send`: a grant claiming validity past `sentAt + ttlMs`, the send of the request the
 *   server granted plus the TTL it asked for (judged only where the grant records both: backends whose
 *   server counts the TTL from that request). `overNs` = by how much.
 */
export type LeaseViolation =
  | {
      kind: 'overlap';
      key: string;
      message: string;
      first: LeaseWindow;
      second: LeaseWindow;
      from: number;
      to: number;
      firstLeftNs: number;
      secondLeftNs: number;
      /** The clients (process ids) of both grants, for drawing. */
      processes: [ProcessId, ProcessId];
    }
  | {
      kind: 'expired-grant';
      key: string;
      message: string;
      index: number;
      grant: LeaseWindow;
      lateNs: number;
    }
  | {
      kind: 'validity-past-send';
      key: string;
      message: string;
      index: number;
      grant: LeaseWindow;
      overNs: number;
    };

export interface LeaseStats {
  grants: number;
  /** Grants whose window is empty (ended before the client learnt of the grant). */
  emptyWindows: number;
  /** Windows still open at the end of the history with no bound (`validUntil: null`, never ended). */
  unbounded: number;
  /** `held: true` observations that fell inside a window. */
  observations: number;
  overlaps: number;
  expiredGrants: number;
  /** Grants that recorded their request's send and TTL, judged by `validity-past-send`. */
  sendChecked: number;
  validityPastSend: number;
  /**
   * The largest `validUntil − (sentAt + ttlMs)` over those grants (ns): how close a correct adapter came to
   * the bound (≤ 0), or how far a convicted one went past it; null when none recorded its send.
   */
  worstSendMarginNs: number | null;
  /** Facts naming a grant the history does not contain. */
  unlinked: number;
  resources: number;
}

export interface LeaseCheckOptions extends LeaseFactOptions {
  /** Overlapping pairs kept in `violations` (all are counted). Default 1000. */
  maxViolations?: number;
  /**
   * How late a grant's first reading may find it before it is an `expired-grant`. Default 1 ms: the
   * adapter checks validity just before it returns and the client reads it just after, a few
   * microtasks later, where a garbage collection can still pause the process.
   */
  expiredGraceMs?: number;
  /**
   * What a grant's `validUntil` may exceed `sentAt + ttlMs` by before it is `validity-past-send`.
   * Default 0.01 ms (10 µs): the rounding of two reads of one monotonic clock (the adapter's lease clock
   * converted to the history's), nothing for latency: the server starts the TTL when it receives the
   * request, after `sentAt`, so validity counted from the send is never late by a trip.
   */
  sendGraceMs?: number;
}

export type LeaseResult = CheckResult<LeaseViolation, LeaseStats>;

/**
 * The lease contract's core promise, judged by the clients' own beliefs: no two grants on one resource
 * are believed valid at the same instant, fencing or not. A grant's believed-valid window is
 * [its `ok`, min(its release, `held` seen false, the latest `validUntil` the client read while it
 * held)). Sorted sweep per resource: O(n log n + k) for k overlapping pairs. A history with no grants
 * is `unknown`: nothing was judged.
 */
export function checkLeases(history: Iterable<HistoryEvent>, options: LeaseCheckOptions = {}): LeaseResult {
  const max = options.maxViolations ?? 1000;
  if (!Number.isInteger(max) || max < 0) {
    throw new LockHistoryError(undefined, 'maxViolations to be a non-negative integer', max);
  }
  const graceNs = (options.expiredGraceMs ?? 1) * 1e6;
  if (!(graceNs >= 0))
    throw new LockHistoryError(
      undefined,
      'expiredGraceMs to be a non-negative number',
      options.expiredGraceMs,
    );
  const sendGraceNs = (options.sendGraceMs ?? 0.01) * 1e6;
  if (!(sendGraceNs >= 0))
    throw new LockHistoryError(undefined, 'sendGraceMs to be a non-negative number', options.sendGraceMs);
  const { windows, unlinked } = leaseWindows(history, options);
  const stats: LeaseStats = {
    grants: windows.length,
    emptyWindows: 0,
    unbounded: 0,
    observations: 0,
    overlaps: 0,
    expiredGrants: 0,
    sendChecked: 0,
    validityPastSend: 0,
    worstSendMarginNs: null,
    unlinked,
    resources: 0,
  };
  const violations: LeaseViolation[] = [];
  const byKey = new Map<string, LeaseWindow[]>();
  for (const w of windows) {
    stats.observations += w.observations;
    // "Passed by more than" the grace (README): exactly the grace late is still within it.
    if (w.grantedAt !== undefined && w.grantedAt - w.grantedValidUntil > graceNs) {
      stats.expiredGrants++;
      if (violations.length < max) violations.push(expiredGrant(w));
    }
    if (w.sentAt !== undefined && w.ttlMs !== undefined) {
      // The server's key lives from its receipt of the request (after `sentAt`) for `ttlMs`: a validity
      // counted from anything later (the answer, a reading after a stop) outlives the key by that much.
      const marginNs = w.grantedValidUntil - (w.sentAt + w.ttlMs * 1e6);
      stats.sendChecked++;
      stats.worstSendMarginNs = Math.max(stats.worstSendMarginNs ?? Number.NEGATIVE_INFINITY, marginNs);
      if (marginNs > sendGraceNs) {
        stats.validityPastSend++;
        if (violations.length < max) violations.push(validityPastSend(w, marginNs));
      }
    }
    if (w.end <= w.start) {
      stats.emptyWindows++;
      continue;
    }
    if (!Number.isFinite(w.end)) stats.unbounded++;
    const list = byKey.get(w.key);
    if (list) list.push(w);
    else byKey.set(w.key, [w]);
  }
  stats.resources = byKey.size;
  for (const list of byKey.values()) {
    list.sort((a, b) => a.start - b.start || a.grantIndex - b.grantIndex);
    let active: LeaseWindow[] = [];
    for (const w of list) {
      // Half-open windows: one that ends exactly when the next begins does not overlap it.
      active = active.filter((a) => a.end > w.start);
      for (const a of active) {
        stats.overlaps++;
        if (violations.length < max) violations.push(overlap(a, w));
      }
      active.push(w);
    }
  }
  if (windows.length === 0) {
    return nothingToCheck('no lease grants (ok events with value.validUntil)', stats);
  }
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats };
}

function overlap(first: LeaseWindow, second: LeaseWindow): LeaseViolation {
  const from = second.start;
  const to = Math.min(first.end, second.end);
  const left = (w: LeaseWindow) => w.validUntil - from;
  const who = (w: LeaseWindow) =>
    `grant ${w.grant} of process ${w.process}${w.fence === undefined ? '' : ` (fence ${w.fence})`}`;
  const span = Number.isFinite(to) ? `for ${formatNs(to - from)}` : 'to the end of the history';
  return {
    kind: 'overlap',
    key: first.key,
    message:
      `${who(first)} and ${who(second)} both believed valid ${span}; ` +
      `validity left at the second grant: ${formatNs(left(first))} and ${formatNs(left(second))}`,
    first,
    second,
    from,
    to,
    firstLeftNs: left(first),
    secondLeftNs: left(second),
    processes: [first.process, second.process],
  };
}

function expiredGrant(w: LeaseWindow): LeaseViolation {
  const lateNs = (w.grantedAt ?? w.start) - w.grantedValidUntil;
  return {
    kind: 'expired-grant',
    key: w.key,
    message: `grant ${w.grant} of process ${w.process} was handed out ${formatNs(lateNs)} past its validUntil`,
    index: w.grantIndex,
    grant: w,
    lateNs,
  };
}

function validityPastSend(w: LeaseWindow, overNs: number): LeaseViolation {
  const fence = w.fence === undefined ? '' : ` (fence ${w.fence})`;
  const trip = formatNs(w.start - (w.sentAt ?? w.start));
  return {
    kind: 'validity-past-send',
    key: w.key,
    message:
      `grant ${w.grant} of process ${w.process}${fence} claimed validity ${formatNs(overNs)} past its request’s ` +
      `send + TTL (sent ${trip} before its answer, TTL ${w.ttlMs} ms): the server counts the TTL from the ` +
      'request, so the key may be gone while the holder still believes',
    index: w.grantIndex,
    grant: w,
    overNs,
  };
}

/** A duration in the history's nanoseconds, for messages. */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return ns > 0 ? 'unbounded' : '-unbounded';
  const abs = Math.abs(ns);
  if (abs >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (abs >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (abs >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns} ns`;
}
