import type { HistoryEvent } from '@fencekit/checker';
import type { CheckerReport } from '../check/check.js';
import type { ViolationMark } from './svg.js';

/**
 * Places checker violations on the timeline without knowing each checker's shape: a history `index`
 * (or `indices`) becomes a mark on the blamed client's lane; a `from`/`to` pair (overlapping holders,
 * two leaders) becomes a band.
 */
export function violationMarks(
  checkers: Record<string, CheckerReport>,
  history: readonly HistoryEvent[],
  clients: number,
): ViolationMark[] {
  const marks: ViolationMark[] = [];
  const laneOf = (e: HistoryEvent | undefined): number | undefined => {
    const client = (e?.value as { client?: unknown } | undefined)?.client;
    if (typeof client === 'number') return client % clients;
    return typeof e?.process === 'number' ? e.process % clients : undefined;
  };
  for (const [name, report] of Object.entries(checkers)) {
    for (const raw of report.violations) {
      const v = raw as Record<string, unknown>;
      const label =
        `${name}: ${String(v.kind ?? 'violation')} ${typeof v.message === 'string' ? v.message : ''}`.trim();
      // An overlap to the end of the history has to = Infinity, which JSON stores as null.
      if (typeof v.from === 'number' && (typeof v.to === 'number' || v.to === null)) {
        const end = typeof v.to === 'number' ? v.to : (history.at(-1)?.time ?? v.from);
        // Lease overlaps name both holders' processes: their lanes get the overlap in red.
        const lanes = Array.isArray(v.processes)
          ? v.processes.filter((p): p is number => typeof p === 'number').map((p) => p % clients)
          : [];
        marks.push({ time: v.from, end, label, ...(lanes.length > 0 ? { lanes } : {}) });
        continue;
      }
      const indices = Array.isArray(v.indices) ? v.indices : typeof v.index === 'number' ? [v.index] : [];
      for (const index of indices) {
        const event = typeof index === 'number' ? history[index] : undefined;
        if (event) marks.push({ time: event.time, lane: laneOf(event), label });
      }
    }
  }
  return marks;
}
