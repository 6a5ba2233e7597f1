import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { checkHistory } from '../src/index.js';
import { timelineSvg } from '../src/report/svg.js';
import { buildTimeline } from '../src/report/timeline-data.js';
import { violationMarks } from '../src/report/violations.js';

const MS = 1e6;

/** Two clients of a mutex whose grants were believed valid at once, as the harness records them. */
function overlapping(): HistoryEvent[] {
  const grant = (process: number, id: string, at: number, validUntil: number) => [
    { time: at - MS, process, type: 'invoke', f: 'acquire', value: { resource: 'section', waitMs: 2_000 } },
    {
      time: at,
      process,
      type: 'ok',
      f: 'acquire',
      value: { grant: id, resource: 'section', fence: null, validUntil: String(validUntil), at: String(at) },
    },
  ];
  const release = (process: number, id: string, at: number) => [
    { time: at, process, type: 'invoke', f: 'release', value: { grant: id, fence: null, boundMs: 5_000 } },
    { time: at + MS, process, type: 'ok', f: 'release', value: null },
  ];
  const lines = [
    ...grant(0, 'c0.1', 10 * MS, 510 * MS),
    ...grant(1, 'c1.1', 200 * MS, 700 * MS),
    ...release(1, 'c1.1', 300 * MS),
    ...release(0, 'c0.1', 400 * MS),
  ] as Omit<HistoryEvent, 'index'>[];
  return lines.sort((a, b) => a.time - b.time).map((e, index) => ({ index, ...e }));
}

describe('the run page timeline', () => {
  it('draws the believed-valid windows green and a lease overlap red on both holders’ lanes', async () => {
    const history = overlapping();
    const outcome = await checkHistory(
      { workload: 'mutex', fenced: false, initialStock: 0, clients: 2 },
      history,
      [],
    );
    expect(outcome.checkers.lease?.verdict).toBe('illegal');
    const marks = violationMarks(outcome.checkers, history, 2);
    const lease = marks.find((m) => m.label.startsWith('lease:'));
    expect(lease).toMatchObject({ time: 200 * MS, end: 300 * MS, lanes: [0, 1] });
    const timeline = buildTimeline(history, 2);
    expect(timeline.holds.map((h) => [h.lane, h.start, h.end])).toEqual([
      [0, 10 * MS, 400 * MS],
      [1, 200 * MS, 300 * MS],
    ]);
    const svg = timelineSvg(timeline, marks);
    expect(svg.match(/class="hold"/g)).toHaveLength(2);
    expect(svg.match(/class="violation-lane" data-lane="(\d)"/g)).toEqual([
      'class="violation-lane" data-lane="0"',
      'class="violation-lane" data-lane="1"',
    ]);
  });

  it('ends a hold where the client’s belief ended, not at a late release', () => {
    const history = overlapping().filter((e) => !(e.process === 0 && e.f === 'release'));
    const timeline = buildTimeline(history, 2);
    // Client 0 never released: its window ends at its validUntil (510 ms), inside the history's end.
    expect(timeline.holds.find((h) => h.lane === 0)).toMatchObject({
      start: 10 * MS,
      end: Math.min(510 * MS, timeline.t1),
    });
  });
});
