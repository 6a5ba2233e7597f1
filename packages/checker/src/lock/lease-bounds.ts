import type { HistoryEvent, ProcessId } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { LockHistoryError } from './errors.js';
import { RESOURCE_PROCESS } from './events.js';
import { formatNs } from './lease.js';
import { type FaultWindow, faultWindows, NEMESIS_PROCESS } from './lease-faults.js';
import { inTimeOrder } from './lease-history.js';

/**
 * An op that ran past the bound its invoke carried (plus the slack). `pending`: it never completed,
 * and the history runs on past its bound. `start`/`end` are its invoke and completion (or the
 * history's end) in ns; `index` is the completion's (or, pending, the invoke's).
 */
export interface OverranViolation {
  kind: 'overran' | 'pending';
  message: string;
  index: number;
  process: ProcessId;
  f: string;
  boundMs: number;
  tookMs: number;
  start: number;
  end: number;
}

export interface BoundsStats {
  /** Ops that carried a bound. */
  bounded: number;
  /** Of those, ops skipped because a pause of their client's process (a SIGSTOP) overlapped them. */
  exempt: number;
  overran: number;
  /** The largest (took − bound) seen, ms; negative when every op kept its bound. */
  worstMarginMs: number;
}

export interface BoundsOptions {
  /** What the host's scheduler may add to any bound (a loaded machine). Default 1 000 ms. */
  slackMs?: number;
  /**
   * Client lanes: process ids are lanes modulo `clients` (the harness's ids after an `info`), so a fault
   * aimed at a client (`value.client`) exempts that client's ops. Without it, only ops of the process
   * named by the fault (`value.process`) are exempt.
   */
  clients?: number;
  /**
   * Faults that stop a client's process (SIGSTOP), exempting its ops: a stopped process cannot keep
   * time. Default `pause-client`, `stall-holder`, `stall-acquire`. Faults merely timed around a client's op (a server
   * outage aimed at its release) exempt nothing: the bound must hold whatever the servers do.
   */
  clientPauses?: readonly string[];
}

export const DEFAULT_CLIENT_PAUSES: readonly string[] = ['pause-client', 'stall-holder', 'stall-acquire'];

export type BoundsResult = CheckResult<OverranViolation, BoundsStats>;

/**
 * Every documented time bound holds: an op whose invoke value carries `boundMs` (or, for a blocking
 * acquire, `waitMs`, the contract's bound) completes within it plus `slackMs`. A pending op counts
 * once the history runs on past its bound. Ops overlapping a pause of their own client's process
 * (`clientPauses`: a stopped process cannot keep time) are exempt and counted. No bounded op → `unknown`.
 */
export function checkBounds(history: Iterable<HistoryEvent>, options: BoundsOptions = {}): BoundsResult {
  const slackMs = options.slackMs ?? 1_000;
  if (typeof slackMs !== 'number' || !(slackMs >= 0)) {
    throw new LockHistoryError(undefined, 'slackMs to be a non-negative number', slackMs);
  }
  const all = inTimeOrder(history);
  const historyEnd = all.length > 0 ? all[all.length - 1]!.time : 0;
  const pauses = new Set(options.clientPauses ?? DEFAULT_CLIENT_PAUSES);
  const aimed = faultWindows(all).filter(
    (f) => pauses.has(f.fault) && (f.client !== undefined || f.process !== undefined),
  );
  const stats: BoundsStats = { bounded: 0, exempt: 0, overran: 0, worstMarginMs: Number.NEGATIVE_INFINITY };
  const violations: OverranViolation[] = [];
  const open = new Map<ProcessId, { invoke: HistoryEvent; boundMs: number }>();
  const judge = (invoke: HistoryEvent, boundMs: number, end: number, endIndex: number | undefined) => {
    stats.bounded++;
    if (aimed.some((f) => hits(f, invoke.process, invoke.time, end, options.clients))) {
      stats.exempt++;
      return;
    }
    const tookMs = (end - invoke.time) / 1e6;
    stats.worstMarginMs = Math.max(stats.worstMarginMs, tookMs - boundMs);
    if (tookMs <= boundMs + slackMs) return;
    const pending = endIndex === undefined;
    stats.overran++;
    violations.push({
      kind: pending ? 'pending' : 'overran',
      message:
        `${invoke.f} by process ${invoke.process} ${pending ? 'still pending after' : 'took'} ` +
        `${formatNs(end - invoke.time)}, past its bound of ${boundMs} ms (slack ${slackMs} ms)`,
      index: endIndex ?? invoke.index,
      process: invoke.process,
      f: invoke.f,
      boundMs,
      tookMs,
      start: invoke.time,
      end,
    });
  };
  for (const e of all) {
    if (e.process === RESOURCE_PROCESS || e.process === NEMESIS_PROCESS) continue;
    if (e.type === 'invoke') {
      const boundMs = boundOf(e);
      if (boundMs === undefined) open.delete(e.process);
      else open.set(e.process, { invoke: e, boundMs });
      continue;
    }
    const op = open.get(e.process);
    if (!op || op.invoke.f !== e.f) continue;
    open.delete(e.process);
    judge(op.invoke, op.boundMs, e.time, e.index);
  }
  for (const { invoke, boundMs } of open.values()) judge(invoke, boundMs, historyEnd, undefined);
  if (stats.bounded === 0)
    return nothingToCheck('no op carries a bound (value.boundMs or value.waitMs)', stats);
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats };
}

function boundOf(invoke: HistoryEvent): number | undefined {
  const value = invoke.value;
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = (value as Record<string, unknown>).boundMs ?? (value as Record<string, unknown>).waitMs;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'number' && Number.isFinite(raw) && raw >= 0) return raw;
  throw new LockHistoryError(invoke.index, 'a non-negative number "value.boundMs" / "value.waitMs"', raw);
}

function hits(
  f: FaultWindow,
  process: ProcessId,
  from: number,
  to: number,
  clients: number | undefined,
): boolean {
  if (f.end <= from || f.start >= to) return false;
  if (f.process !== undefined && f.process === process) return true;
  return (
    clients !== undefined &&
    f.client !== undefined &&
    typeof process === 'number' &&
    process % clients === f.client
  );
}
