import type { HistoryEvent, ProcessId } from '../history/types.js';

/** A fault that was (or may have been) in force during [start, end): from its `start` invoke to its `stop`'s completion. */
export interface FaultWindow {
  fault: string;
  start: number;
  /** Infinity when the history never stops it. */
  end: number;
  /** The client it was aimed at (its lane, `value.client`), if it was aimed at one. */
  client?: number | undefined;
  /** The process id that client had when the fault began (`value.process`), if recorded. */
  process?: ProcessId | undefined;
}

export const NEMESIS_PROCESS = 'nemesis';

/**
 * The nemesis's fault windows, Jepsen-style: a `start` whose completion is `fail` was not applied; any
 * other (`ok`, or `info`: it may have been) is in force from its invoke until the completion of the
 * `stop` of the same fault (`value.fault`), or of a `stop` of `all` (the final heal), or to the end.
 */
export function faultWindows(history: Iterable<HistoryEvent>): FaultWindow[] {
  const windows: FaultWindow[] = [];
  const open: FaultWindow[] = [];
  let starting: { time: number; fault: string } | undefined;
  for (const e of history) {
    if (e.process !== NEMESIS_PROCESS) continue;
    const value = (typeof e.value === 'object' && e.value !== null ? e.value : {}) as Record<string, unknown>;
    const fault = String(value.fault ?? '?');
    if (e.f === 'start') {
      if (e.type === 'invoke') starting = { time: e.time, fault };
      else {
        const began = starting?.fault === fault ? starting.time : e.time;
        starting = undefined;
        if (e.type === 'fail') continue;
        open.push({
          fault,
          start: began,
          end: Number.POSITIVE_INFINITY,
          client: typeof value.client === 'number' ? value.client : undefined,
          process:
            typeof value.process === 'number' || typeof value.process === 'string'
              ? value.process
              : undefined,
        });
      }
    } else if (e.f === 'stop' && e.type !== 'invoke') {
      for (let i = open.length - 1; i >= 0; i--) {
        const w = open[i]!;
        if (fault !== 'all' && w.fault !== fault) continue;
        w.end = e.time;
        windows.push(w);
        open.splice(i, 1);
        if (fault !== 'all') break;
      }
    }
  }
  windows.push(...open);
  // A start still unanswered at the end may have been applied.
  if (starting) windows.push({ fault: starting.fault, start: starting.time, end: Number.POSITIVE_INFINITY });
  return windows.sort((a, b) => a.start - b.start);
}
