import type { HistoryEvent, ProcessId } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { LockHistoryError } from './errors.js';
import { RESOURCE_PROCESS } from './events.js';
import { formatNs } from './lease.js';
import { faultWindows, NEMESIS_PROCESS } from './lease-faults.js';
import { inTimeOrder, type LeaseFactOptions, leaseWindows } from './lease-history.js';

/**
 * A resource nobody was believed to hold, with no fault in force, while waiters were asking for it,
 * for longer than the bound in all: `waitedNs` of waiting (time with at least one acquire pending)
 * inside the free stretch [`from`, `to`).
 */
export interface StarvedViolation {
  kind: 'starved';
  key: string;
  message: string;
  from: number;
  to: number;
  waitedNs: number;
  boundNs: number;
  /** Processes whose acquire was pending in the stretch, and those acquires' invoke indices. */
  waiters: ProcessId[];
  indices: number[];
}

export interface LivenessStats {
  acquires: number;
  /** Free stretches in which someone waited at all. */
  contendedFreeStretches: number;
  /** The longest waiting inside one free stretch, ns. */
  longestWaitNs: number;
  faults: number;
  starved: number;
  resources: number;
}

export interface LivenessOptions extends LeaseFactOptions {
  /**
   * How long waiters may wait in all, inside one stretch where the lock is free and no fault is in
   * force, before it is starvation. Default 2 000 ms; the harness passes max(2 s, 2 × TTL) (see README).
   */
  boundMs?: number;
  /** Ops that wait for the lock. Default `acquire`. */
  acquireOps?: readonly string[];
  /**
   * How long a fault still counts as in force after its heal completed. Default 0. A healed fault's
   * effect can outlast the heal by the system's own recovery: a rejoining etcd member with a higher
   * term forces a leader election (etcd 3.4 has no pre-vote), and every session waits for it. The
   * harness passes one liveness bound, as Jepsen gives a recovery phase after the final heal.
   */
  settleMs?: number;
}

export type LivenessResult = CheckResult<StarvedViolation, LivenessStats>;

type Edge = { time: number; windows: number; faults: number; waiters: number; waiter?: Waiter };
interface Waiter {
  process: ProcessId;
  index: number;
}

/**
 * Liveness of a lock, judged from the same beliefs as `checkLeases`: a lock that is free (no grant
 * believed valid) while waiters ask for it must be granted soon. Per resource, the timeline is cut
 * into free stretches (no believed-valid window, no nemesis fault in force); inside each, the time
 * during which at least one acquire was pending is summed, and a sum above the bound is `starved`
 * (a key that outlived its lease, a node nobody deletes, a queue head that never moves). Summing over
 * consecutive waiters catches a lock stuck for good even when each waiter gives up before the bound.
 */
export function checkLiveness(
  history: Iterable<HistoryEvent>,
  options: LivenessOptions = {},
): LivenessResult {
  const boundMs = options.boundMs ?? 2_000;
  if (typeof boundMs !== 'number' || !(boundMs > 0)) {
    throw new LockHistoryError(undefined, 'boundMs to be a positive number', boundMs);
  }
  const boundNs = boundMs * 1e6;
  const settleMs = options.settleMs ?? 0;
  if (typeof settleMs !== 'number' || !(settleMs >= 0) || !Number.isFinite(settleMs)) {
    throw new LockHistoryError(undefined, 'settleMs to be a non-negative number', settleMs);
  }
  const settleNs = settleMs * 1e6;
  const all = inTimeOrder(history);
  const acquireOps = new Set(options.acquireOps ?? ['acquire']);
  const end = all.length > 0 ? all[all.length - 1]!.time : 0;
  const edges = new Map<string, Edge[]>();
  const edgesOf = (key: string) => {
    let list = edges.get(key);
    if (!list) {
      list = [];
      edges.set(key, list);
    }
    return list;
  };
  for (const w of leaseWindows(all, options).windows) {
    if (w.end <= w.start) continue;
    const list = edgesOf(w.key);
    list.push({ time: w.start, windows: 1, faults: 0, waiters: 0 });
    if (Number.isFinite(w.end)) list.push({ time: w.end, windows: -1, faults: 0, waiters: 0 });
  }
  const stats: LivenessStats = {
    acquires: 0,
    contendedFreeStretches: 0,
    longestWaitNs: 0,
    faults: 0,
    starved: 0,
    resources: 0,
  };
  const pending = new Map<ProcessId, HistoryEvent>();
  const addWaiter = (invoke: HistoryEvent, until: number) => {
    const value = (invoke.value ?? {}) as Record<string, unknown>;
    const key = String(value.resource ?? invoke.key ?? '');
    const waiter = { process: invoke.process, index: invoke.index };
    const list = edgesOf(key);
    stats.acquires++;
    // An acquire answered at the instant it was asked never waited; its edges would sort end first
    // (ends before starts) and leave it waiting for good.
    if (until <= invoke.time) return;
    list.push({ time: invoke.time, windows: 0, faults: 0, waiters: 1, waiter });
    list.push({ time: until, windows: 0, faults: 0, waiters: -1, waiter });
  };
  for (const e of all) {
    if (e.process === RESOURCE_PROCESS || e.process === NEMESIS_PROCESS) continue;
    if (e.type === 'invoke') {
      if (acquireOps.has(e.f)) pending.set(e.process, e);
      continue;
    }
    const invoke = pending.get(e.process);
    if (invoke && invoke.f === e.f) {
      pending.delete(e.process);
      addWaiter(invoke, e.time);
    }
  }
  for (const invoke of pending.values()) addWaiter(invoke, end);
  const faults = faultWindows(all);
  stats.faults = faults.length;
  const violations: StarvedViolation[] = [];
  // Faults hold every resource: their edges are built and sorted once and merged into each resource's
  // sweep from where that resource's edges begin (3 000 resources × 3 000 faults copied each fault into
  // every list: 1.5 GB).
  const faultEdges: Edge[] = [];
  for (const f of faults) {
    faultEdges.push({ time: f.start, windows: 0, faults: 1, waiters: 0 });
    if (Number.isFinite(f.end))
      faultEdges.push({ time: f.end + settleNs, windows: 0, faults: -1, waiters: 0 });
  }
  faultEdges.sort(byEdgeOrder);
  /** Faults in force after each fault edge. */
  const levels = new Int32Array(faultEdges.length);
  const lastInForce = new Int32Array(faultEdges.length);
  for (let i = 0, level = 0; i < faultEdges.length; i++) {
    levels[i] = level += faultEdges[i]!.faults;
    lastInForce[i] = level > 0 ? i : i > 0 ? lastInForce[i - 1]! : -1;
  }
  for (const [key, list] of edges) {
    list.sort(byEdgeOrder);
    sweep(key, list, { edges: faultEdges, levels, lastInForce }, boundNs, stats, violations);
  }
  stats.resources = [...edges.values()].filter((l) =>
    l.some((e) => e.windows !== 0 || e.waiters !== 0),
  ).length;
  stats.starved = violations.length;
  if (stats.acquires === 0) {
    return nothingToCheck(`no ${[...acquireOps].join('/')} ops`, stats);
  }
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats };
}

/** At one instant, ends before starts: a window ending as another begins leaves no free gap. */
function byEdgeOrder(a: Edge, b: Edge): number {
  return a.time - b.time || a.windows + a.faults + a.waiters - (b.windows + b.faults + b.waiters);
}

/**
 * The fault edges in order, the faults in force after each (zero-length faults sort their end first,
 * so it can dip below 0: no fault), and the last edge up to each that left a fault in force (or -1).
 */
interface FaultTimeline {
  edges: readonly Edge[];
  levels: Int32Array;
  lastInForce: Int32Array;
}

/**
 * Sweeps one resource's edges merged with the fault timeline, as if the fault edges were in its list
 * (a resource edge first on a tie). Fault edges before the resource's first one matter only as the
 * level they leave and the last of them (a stretch opens where the last fault healed); after its last
 * one, only until the open stretch closes. So each resource costs its own edges, not every fault's.
 */
function sweep(
  key: string,
  own: Edge[],
  faultline: FaultTimeline,
  boundNs: number,
  stats: LivenessStats,
  out: StarvedViolation[],
): void {
  const fe = faultline.edges;
  // First fault edge that the merge puts after the resource's first edge.
  let lo = 0;
  let hi = fe.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byEdgeOrder(fe[mid]!, own[0]!) < 0) lo = mid + 1;
    else hi = mid;
  }
  const list = mergedEdges(own, fe, lo);
  let windows = 0;
  let faults = lo > 0 ? faultline.levels[lo - 1]! : 0;
  // Where a free stretch opened before the resource's first edge: after the last fault edge that left
  // a fault in force (nobody waited on this resource before it, so only its start matters).
  const freeFrom = lo === 0 ? -1 : faultline.lastInForce[lo - 1]! + 1;
  /** Acquires pending now: invoke index → process. */
  const waiting = new Map<number, ProcessId>();
  let stretch: { from: number; waited: number; waiters: Map<number, ProcessId> } | undefined =
    freeFrom >= 0 && freeFrom < lo ? { from: fe[freeFrom]!.time, waited: 0, waiters: new Map() } : undefined;
  // Waiting is summed from `last` only while a waiter is pending, which none is before `own[0]`.
  let last = own[0]?.time ?? 0;
  const closeStretch = (to: number) => {
    if (!stretch) return;
    if (stretch.waited > 0) stats.contendedFreeStretches++;
    stats.longestWaitNs = Math.max(stats.longestWaitNs, stretch.waited);
    if (stretch.waited > boundNs) {
      const processes = [...new Set(stretch.waiters.values())];
      out.push({
        kind: 'starved',
        key,
        message:
          `${key === '' ? 'the lock' : `"${key}"`} was free (no grant believed valid, no fault) while waiters ` +
          `asked for it for ${formatNs(stretch.waited)} in all (bound ${formatNs(boundNs)}), by ` +
          processes.map((p) => `process ${p}`).join(', '),
        from: stretch.from,
        to,
        waitedNs: stretch.waited,
        boundNs,
        waiters: processes,
        indices: [...stretch.waiters.keys()],
      });
    }
    stretch = undefined;
  };
  for (const edge of list) {
    // Past the resource's own edges only the stretch still open matters: the next fault closes it.
    if (edge.faults !== 0 && list.ownDone() && !stretch && waiting.size === 0) break;
    if (stretch && waiting.size > 0) stretch.waited += edge.time - last;
    last = edge.time;
    windows += edge.windows;
    faults += edge.faults;
    if (edge.waiter) {
      if (edge.waiters > 0) waiting.set(edge.waiter.index, edge.waiter.process);
      else waiting.delete(edge.waiter.index);
    }
    if (windows > 0 || faults > 0) closeStretch(edge.time);
    else if (!stretch) stretch = { from: edge.time, waited: 0, waiters: new Map(waiting) };
    else if (edge.waiter && edge.waiters > 0) stretch.waiters.set(edge.waiter.index, edge.waiter.process);
  }
  closeStretch(last);
}

/** The resource's edges and the fault edges from `from` on, merged (own first on a tie), lazily. */
function mergedEdges(own: readonly Edge[], faults: readonly Edge[], from: number) {
  let i = 0;
  let j = from;
  const iterator = {
    ownDone: () => i >= own.length,
    *[Symbol.iterator](): Generator<Edge> {
      while (i < own.length || j < faults.length) {
        if (j >= faults.length || (i < own.length && byEdgeOrder(own[i]!, faults[j]!) <= 0)) yield own[i++]!;
        else yield faults[j++]!;
      }
    },
  };
  return iterator;
}
