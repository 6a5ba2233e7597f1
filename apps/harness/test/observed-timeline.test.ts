import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import type { RunMeta } from '../src/index.js';
import { observedSpans } from '../src/report/run-page.js';
import { timelineSvg } from '../src/report/svg.js';
import { buildTimeline } from '../src/report/timeline-data.js';

/**
 * #20: the run page draws each fault's observed window (what the independent probes saw, stamped in ms from the run's
 * start) on the history's clock, apart from its applied window (the nemesis ops); an effect never seen to end runs
 * to the end of the drawing, marked so; a stored run.json's stamps outside the run stay within the drawing.
 */
const MS = 1e6;
const T0 = 5_000 * MS;

function history(): HistoryEvent[] {
  const lines: Omit<HistoryEvent, 'index'>[] = [
    { time: T0, process: 0, type: 'invoke', f: 'acquire', value: null },
    { time: T0 + 100 * MS, process: 'nemesis', type: 'invoke', f: 'start', value: { fault: 'pause-client' } },
    {
      time: T0 + 101 * MS,
      process: 'nemesis',
      type: 'ok',
      f: 'start',
      value: { fault: 'pause-client', client: 0 },
    },
    { time: T0 + 600 * MS, process: 'nemesis', type: 'invoke', f: 'stop', value: { fault: 'pause-client' } },
    { time: T0 + 601 * MS, process: 'nemesis', type: 'ok', f: 'stop', value: { fault: 'pause-client' } },
    { time: T0 + 700 * MS, process: 'nemesis', type: 'invoke', f: 'start', value: { fault: 'kill' } },
    { time: T0 + 701 * MS, process: 'nemesis', type: 'ok', f: 'start', value: { fault: 'kill', node: 'n1' } },
    { time: T0 + 900 * MS, process: 'nemesis', type: 'invoke', f: 'stop', value: { fault: 'kill' } },
    { time: T0 + 901 * MS, process: 'nemesis', type: 'ok', f: 'stop', value: { fault: 'kill' } },
    { time: T0 + 1_000 * MS, process: 0, type: 'ok', f: 'acquire', value: null },
  ];
  return lines.map((e, index) => ({ index, ...e }) as HistoryEvent);
}

const seen = (atMs: number) => ({ seen: true, detail: 'state T', atMs });

function meta(faultsApplied: RunMeta['faultsApplied']): RunMeta {
  return { startedAtNs: T0, faultsApplied } as RunMeta;
}

describe('observed windows on the run page timeline', () => {
  it('places each on the history clock from startedAtNs, apart from the applied band', () => {
    const timeline = buildTimeline(history(), 1);
    const spans = observedSpans(
      meta([
        {
          fault: 'pause-client',
          target: { client: 0 },
          applied: true,
          observed: { started: seen(102), healed: seen(603) },
        },
        // Seen to take effect, never seen to end; and a stamp past the run's end (a stored file) stays inside.
        { fault: 'kill', target: { node: 'n1' }, applied: true, observed: { started: seen(702) } },
        // Not seen, or not applied: nothing to draw.
        {
          fault: 'latency',
          target: { node: 'n1' },
          applied: true,
          observed: { started: { seen: false, detail: 'x', atMs: 1 } },
        },
        { fault: 'partition', target: {}, applied: false },
      ]),
      timeline,
    );
    expect(spans.map((s) => [s.fault, s.start, s.end, s.ended])).toEqual([
      ['pause-client', T0 + 102 * MS, T0 + 603 * MS, true],
      ['kill', T0 + 702 * MS, timeline.t1, false],
    ]);
    expect(spans[0]!.label).toBe('pause-client on client 0: effect observed 0.1 s – 0.6 s (state T)');
    expect(spans[1]!.label).toMatch(/^kill on n1: effect observed 0\.7 s – not seen to end/);
    const svg = timelineSvg(timeline, [], spans);
    expect(svg.match(/<rect class="fault"/g)).toHaveLength(2);
    expect(svg.match(/<rect class="observed" data-fault="pause-client" data-ended="true"/g)).toHaveLength(1);
    expect(svg.match(/<rect class="observed" data-fault="kill" data-ended="false"/g)).toHaveLength(1);
    // Two dashed edges for the window that ended, one for the one that did not.
    expect(svg.match(/class="observed-edge"/g)).toHaveLength(3);
    const far = timelineSvg(timeline, [], [{ ...spans[0]!, start: T0 - 1e12, end: T0 + 1e15 }]);
    const [, x, width] = far.match(/class="observed"[^>]* x="([\d.]+)" y="4" width="([\d.]+)"/) ?? [];
    expect(Number(x)).toBeGreaterThanOrEqual(80);
    expect(Number(x) + Number(width)).toBeLessThanOrEqual(1200);
  });

  it('draws no strip when no effect was observed', () => {
    const timeline = buildTimeline(history(), 1);
    expect(timelineSvg(timeline, [], observedSpans(meta([]), timeline))).not.toMatch(/observed/);
  });
});
