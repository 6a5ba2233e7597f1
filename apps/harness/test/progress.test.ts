import { describe, expect, it } from 'vitest';
import { barLine, consoleProgress, type RunStatus } from '../src/run/progress.js';

const status: RunStatus = {
  run: 'r1',
  phase: 'run',
  elapsedMs: 5_000,
  durationMs: 10_000,
  opsPerSecond: 420,
  events: 1_000,
  faults: 2,
  position: { index: 3, total: 18 },
};

function output(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 120, write: (text: string) => writes.push(text) } };
}

describe('progress', () => {
  it('draws a bar in place on a terminal, with the suite position, phase, ops/s and faults', () => {
    const { writes, stream } = output(true);
    const sink = consoleProgress(stream);
    sink.status(status);
    sink.status({ ...status, elapsedMs: 6_000 });
    expect(writes).toHaveLength(2);
    for (const w of writes) expect(w.startsWith('\r\x1b[2K')).toBe(true);
    expect(writes[1]).toContain('run 3/18');
    expect(writes[1]).toMatch(/6\/10 s {2}run {2}420 ops\/s {2}2 faults/);
    expect(writes[1]).not.toContain('\n');
  });

  it('prints log lines above the bar and redraws it; end() clears it', () => {
    const { writes, stream } = output(true);
    const sink = consoleProgress(stream);
    sink.status(status);
    sink.line('nemesis: paused client 1');
    expect(writes.slice(1)).toEqual([
      '\r\x1b[2K',
      'nemesis: paused client 1\n',
      `\r\x1b[2K${barLine(status)}`,
    ]);
    sink.end();
    expect(writes.at(-1)).toBe('\r\x1b[2K');
  });

  it('off a terminal, writes the status as a plain line at most every 2 s and never redraws', () => {
    const { writes, stream } = output(false);
    const sink = consoleProgress(stream);
    sink.status(status);
    sink.status({ ...status, elapsedMs: 5_500 });
    sink.line('phase=recovery');
    expect(writes).toEqual([
      '[r1] run 3/18 phase=run t=5s/10s ops/s=420 events=1000 faults=2\n',
      'phase=recovery\n',
    ]);
    expect(writes.join('')).not.toContain('\r');
  });

  it('fills the bar in proportion to the elapsed time', () => {
    expect(barLine({ ...status, elapsedMs: 0 })).toContain(`▕${' '.repeat(24)}▏`);
    expect(barLine({ ...status, elapsedMs: 10_000 })).toContain(`▕${'█'.repeat(24)}▏`);
    expect(barLine({ ...status, elapsedMs: 20_000 })).toContain(`▕${'█'.repeat(24)}▏`);
  });
});
