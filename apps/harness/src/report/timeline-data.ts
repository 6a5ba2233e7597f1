import { type HistoryEvent, leaseWindows } from '@fencekit/checker';

/** A client operation, invoke to completion (`end` undefined = still open at the end: outcome unknown). */
export interface OpSpan {
  lane: number;
  process: number;
  f: string;
  start: number;
  end: number | undefined;
  type: 'ok' | 'fail' | 'info' | 'open';
  value: unknown;
}

export interface FaultSpan {
  fault: string;
  start: number;
  end: number;
  applied: boolean;
  label: string;
}

export interface ResourceMark {
  lane: number;
  time: number;
  f: string;
  accepted: boolean;
  label: string;
}

export interface HoldSpan {
  lane: number;
  start: number;
  end: number;
  label: string;
}

export interface Timeline {
  t0: number;
  t1: number;
  lanes: number;
  ops: OpSpan[];
  holds: HoldSpan[];
  faults: FaultSpan[];
  resource: ResourceMark[];
}

/** Ops that begin a lock-holding interval, and those that end it. */
const GRANT_OPS = new Set(['acquire', 'campaign', 'lock']);
const END_OPS = new Set(['release', 'resign']);

/** Reads the report's view of a history: spans per client lane, holds, faults and the resource's marks. */
export function buildTimeline(history: readonly HistoryEvent[], clients: number, cronHoldNs = 0): Timeline {
  // The run starts with the first client or fault event; the resource's init precedes client start-up.
  const t0 = history.find((e) => e.process !== 'resource')?.time ?? history[0]?.time ?? 0;
  const t1 = history.at(-1)?.time ?? t0 + 1;
  const laneOf = (p: number) => ((p % clients) + clients) % clients;
  const open = new Map<number, HistoryEvent>();
  const ops: OpSpan[] = [];
  const holds: HoldSpan[] = [];
  const holding = new Map<number, { start: number; label: string }>();
  const faults: FaultSpan[] = [];
  const openFaults: { fault: string; start: number; label: string }[] = [];
  const resource: ResourceMark[] = [];
  for (const e of history) {
    if (typeof e.process === 'number') {
      if (e.type === 'invoke') {
        open.set(e.process, e);
        if (END_OPS.has(e.f)) closeHold(holding, holds, e.process, e.time, laneOf);
        continue;
      }
      const inv = open.get(e.process);
      open.delete(e.process);
      if (!inv) continue;
      ops.push({
        lane: laneOf(e.process),
        process: e.process,
        f: e.f,
        start: inv.time,
        end: e.time,
        type: e.type,
        value: e.value,
      });
      if (GRANT_OPS.has(e.f) && e.type === 'ok') {
        const v = (e.value ?? {}) as Record<string, unknown>;
        const label = v.fence != null ? `fence ${v.fence}` : v.term != null ? `term ${v.term}` : 'held';
        if (e.f === 'lock' && cronHoldNs > 0)
          holds.push({ lane: laneOf(e.process), start: e.time, end: e.time + cronHoldNs, label });
        else holding.set(e.process, { start: e.time, label });
      }
      if (e.type === 'info') closeHold(holding, holds, e.process, e.time, laneOf);
    } else if (e.process === 'nemesis') {
      const v = (e.value ?? {}) as Record<string, unknown>;
      const fault = String(v.fault ?? '?');
      if (e.f === 'start' && e.type === 'ok') {
        openFaults.push({ fault, start: e.time, label: describeFault(v) });
      } else if (e.f === 'start' && e.type !== 'invoke') {
        faults.push({
          fault,
          start: e.time,
          end: e.time,
          applied: false,
          label: `${fault}: ${e.error ?? 'not applied'}`,
        });
      } else if (e.f === 'stop' && e.type !== 'invoke') {
        // 'all' (the final heal) closes every open window.
        for (let i = openFaults.length - 1; i >= 0; i--) {
          const o = openFaults[i]!;
          if (fault !== 'all' && o.fault !== fault) continue;
          faults.push({ fault: o.fault, start: o.start, end: e.time, applied: true, label: o.label });
          openFaults.splice(i, 1);
          if (fault !== 'all') break;
        }
      }
    } else if (e.process === 'resource' && e.f !== 'init') {
      const v = (e.value ?? {}) as Record<string, unknown>;
      if (typeof v.client !== 'number') continue;
      const accepted = v.accepted !== false;
      const detail = ['stock', 'fence', 'term', 'tick']
        .filter((k) => v[k] !== undefined)
        .map((k) => `${k} ${v[k]}`);
      resource.push({
        lane: laneOf(v.client),
        time: e.time,
        f: e.f,
        accepted,
        label: `${e.f} by ${v.client} ${detail.join(' ')}${accepted ? '' : ' REFUSED'}`,
      });
    }
  }
  for (const [process, inv] of open) {
    ops.push({
      lane: laneOf(process),
      process,
      f: inv.f,
      start: inv.time,
      end: undefined,
      type: 'open',
      value: inv.value,
    });
  }
  for (const [process, h] of holding)
    holds.push({ lane: laneOf(process), start: h.start, end: t1, label: `${h.label} (never released)` });
  const believed = believedHolds(history, t1, laneOf);
  for (const o of openFaults)
    faults.push({ fault: o.fault, start: o.start, end: t1, applied: true, label: o.label });
  return { t0, t1, lanes: clients, ops, holds: believed ?? holds, faults, resource };
}

/**
 * The holds as the lease check sees them, where the clients recorded lease facts: each grant's
 * believed-valid window (to its release, `held` seen false, or its latest `validUntil`). Undefined for
 * histories without them (older runs, elections on native recipes): the grant-to-release spans stand.
 */
function believedHolds(
  history: readonly HistoryEvent[],
  t1: number,
  laneOf: (p: number) => number,
): HoldSpan[] | undefined {
  let windows: ReturnType<typeof leaseWindows>['windows'];
  try {
    windows = leaseWindows(history).windows;
  } catch {
    return undefined; // a malformed fact: the lease checker reports it; the picture falls back
  }
  if (windows.length === 0) return undefined;
  const shares = grantShares(history);
  return windows
    .filter((w) => typeof w.process === 'number' && w.end > w.start)
    .map((w) => ({
      lane: laneOf(w.process as number),
      start: w.start,
      end: Math.min(w.end, t1),
      label: `${w.fence === undefined ? 'held' : `fence ${w.fence}`}${shares.get(w.grant) ?? ''} (${w.grant}, ${w.endedBy === 'open' ? 'never ended' : `ended: ${w.endedBy}`})`,
    }));
}

/**
 * What a shared grant holds, for its label: ", 2 of 3 permits" (semaphore) or ", write" (read-write lock),
 * from its `ok`'s `permits`/`limit` or `mode`; nothing for a mutex grant.
 */
function grantShares(history: readonly HistoryEvent[]): Map<string, string> {
  const shares = new Map<string, string>();
  for (const e of history) {
    if (e.type !== 'ok' || typeof e.value !== 'object' || e.value === null) continue;
    const v = e.value as Record<string, unknown>;
    if (typeof v.grant !== 'string') continue;
    if (v.mode === 'read' || v.mode === 'write') shares.set(v.grant, `, ${v.mode}`);
    else if (typeof v.permits === 'number' && typeof v.limit === 'number') {
      shares.set(v.grant, `, ${v.permits} of ${v.limit} permits`);
    }
  }
  return shares;
}

function closeHold(
  holding: Map<number, { start: number; label: string }>,
  holds: HoldSpan[],
  process: number,
  time: number,
  laneOf: (p: number) => number,
): void {
  const h = holding.get(process);
  if (!h) return;
  holding.delete(process);
  holds.push({ lane: laneOf(process), start: h.start, end: time, label: h.label });
}

function describeFault(v: Record<string, unknown>): string {
  const parts = [String(v.fault)];
  if (v.node) parts.push(`node ${v.node}`);
  if (v.client !== undefined) parts.push(`client ${v.client}`);
  if (Array.isArray(v.halves)) parts.push(`halves ${JSON.stringify(v.halves)}`);
  if (Array.isArray(v.nodes)) parts.push(`nodes ${JSON.stringify(v.nodes)}`);
  return parts.join(' ');
}
