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
 * A completion names its fault or not (`value` null): it answers the earliest start invoke pending for
 * that fault, else the earliest pending, so the window still runs from the invoke. A `stop` that
 * completed `fail` did not heal (Jepsen: a failed op did not happen): the fault stays in force; one
 * that completed `info` may have healed, and ends it as `ok` does.
 */
export function faultWindows(history: Iterable<HistoryEvent>): FaultWindow[] {
  const windows: FaultWindow[] = [];
  let open: FaultWindow[] = [];
  /** Start invokes not yet answered, in order. */
  const starting: { time: number; fault: string }[] = [];
  for (const e of history) {
    if (e.process !== NEMESIS_PROCESS) continue;
    const value = (typeof e.value === 'object' && e.value !== null ? e.value : {}) as Record<string, unknown>;
    const named = value.fault === undefined || value.fault === null ? undefined : String(value.fault);
    const fault = named ?? '?';
    if (e.f === 'start') {
      if (e.type === 'invoke') starting.push({ time: e.time, fault });
      else {
        let at = named === undefined ? -1 : starting.findIndex((s) => s.fault === named);
        if (at === -1 && named === undefined && starting.length > 0) at = 0;
        const invoke = at === -1 ? undefined : starting.splice(at, 1)[0];
        if (e.type === 'fail') continue;
        open.push({
          fault: named ?? invoke?.fault ?? '?',
          start: invoke?.time ?? e.time,
          end: Number.POSITIVE_INFINITY,
          client: typeof value.client === 'number' ? value.client : undefined,
          process:
            typeof value.process === 'number' || typeof value.process === 'string'
              ? value.process
              : undefined,
        });
      }
    } else if (e.f === 'stop' && e.type !== 'invoke' && e.type !== 'fail') {
      if (fault === 'all') {
        for (const w of open) {
          w.end = e.time;
          windows.push(w);
        }
        open = [];
        continue;
      }
      for (let i = open.length - 1; i >= 0; i--) {
        const w = open[i]!;
        if (w.fault !== fault) continue;
        w.end = e.time;
        windows.push(w);
        open.splice(i, 1);
        break;
      }
    }
  }
  // One by one: spreading ~130 000 unstopped faults into push() overflowed the stack.
  for (const w of open) windows.push(w);
  // A start still unanswered at the end may have been applied.
  for (const s of starting) windows.push({ fault: s.fault, start: s.time, end: Number.POSITIVE_INFINITY });
  return windows.sort((a, b) => a.start - b.start);
}
