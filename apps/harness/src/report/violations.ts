import type { HistoryEvent } from '@fencekit/checker';
import type { CheckerReport } from '../check/check.js';
import { abridge, PAGE_LIMITS } from './abridge.js';
import type { ViolationMark } from './svg.js';

/**
 * Places checker violations on the timeline without knowing each checker's shape: a history `index`
 * (or `indices`) becomes a mark on the blamed client's lane; a `from`/`to` pair (overlapping holders,
 * two leaders) becomes a band. At most `PAGE_LIMITS.marks` violations per checker are placed, each on at
 * most `PAGE_LIMITS.marks` events: a stored results.json may list millions (results keep 50 of each checker).
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
    for (const raw of report.violations.slice(0, PAGE_LIMITS.marks)) {
      const v = raw as Record<string, unknown>;
      const label =
        `${name}: ${String(abridge(v.kind ?? 'violation'))} ${typeof v.message === 'string' ? abridge(v.message) : ''}`.trim();
      // An overlap to the end of the history has to = Infinity, which JSON stores as null.
      if (typeof v.from === 'number' && (typeof v.to === 'number' || v.to === null)) {
        const end = typeof v.to === 'number' ? v.to : (history.at(-1)?.time ?? v.from);
        // Lease overlaps name both holders' processes: their lanes get the overlap in red.
        // One band per lane: a list of millions of processes names at most `clients` lanes.
        const lanes = new Set<number>();
        if (Array.isArray(v.processes)) {
          for (const p of v.processes) {
            if (typeof p === 'number' && Number.isInteger(p)) lanes.add(((p % clients) + clients) % clients);
            if (lanes.size === clients) break;
          }
        }
        marks.push({ time: v.from, end, label, ...(lanes.size > 0 ? { lanes: [...lanes] } : {}) });
        continue;
      }
      const indices = Array.isArray(v.indices) ? v.indices : typeof v.index === 'number' ? [v.index] : [];
      for (const index of indices.slice(0, PAGE_LIMITS.marks)) {
        const event = typeof index === 'number' ? history[index] : undefined;
        if (event) marks.push({ time: event.time, lane: laneOf(event), label });
      }
    }
  }
  return marks;
}
