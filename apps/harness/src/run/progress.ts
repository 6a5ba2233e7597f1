/** Where a run stands, sent a few times a second while its clients run. */
export interface RunStatus {
  /** The run's id. */
  readonly run: string;
  readonly phase: string;
  readonly elapsedMs: number;
  readonly durationMs: number;
  /** Operations completed per second over the last interval. */
  readonly opsPerSecond: number;
  readonly events: number;
  /** Faults started so far. */
  readonly faults: number;
  /** Position in a suite (1-based), when the run is one of several. */
  readonly position?: { readonly index: number; readonly total: number };
}

/** How progress reaches the operator: log lines (phases, faults) and a live status. */
export interface ProgressSink {
  line(text: string): void;
  status(status: RunStatus): void;
  /** Clears whatever is drawn live; the next line starts on a clean row. */
  end(): void;
}

/** The status as one plain line, as logs and CI get it. */
export function statusLine(s: RunStatus): string {
  const at = s.position ? `run ${s.position.index}/${s.position.total} ` : '';
  const t = `${Math.round(s.elapsedMs / 1_000)}s/${Math.round(s.durationMs / 1_000)}s`;
  return `[${s.run}] ${at}phase=${s.phase} t=${t} ops/s=${s.opsPerSecond} events=${s.events} faults=${s.faults}`;
}

const PLAIN_EVERY_MS = 2_000;
const BAR_WIDTH = 24;

interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * Progress on a terminal: a bar redrawn in place on one row (`\r`, erase line) with the suite position,
 * phase, elapsed time, ops/s and faults; log lines scroll above it. Not on a terminal (CI, a file), the
 * status becomes a plain line every 2 s, and nothing is redrawn.
 */
export function consoleProgress(output: Output = process.stderr): ProgressSink {
  const live = output.isTTY === true;
  let drawn = false;
  let lastPlain = Number.NEGATIVE_INFINITY;
  let last: RunStatus | undefined;
  const clear = () => {
    if (drawn) output.write('\r\x1b[2K');
    drawn = false;
  };
  const draw = (s: RunStatus) => {
    const width = Math.max(20, (output.columns || 80) - 1);
    output.write(`\r\x1b[2K${barLine(s).slice(0, width)}`);
    drawn = true;
  };
  return {
    line(text) {
      clear();
      output.write(`${text}\n`);
      if (live && last) draw(last);
    },
    status(s) {
      last = s;
      if (live) {
        draw(s);
        return;
      }
      const now = performance.now();
      if (now - lastPlain < PLAIN_EVERY_MS) return;
      lastPlain = now;
      output.write(`${statusLine(s)}\n`);
    },
    end() {
      clear();
      last = undefined;
    },
  };
}

/** The live row: `run 3/18 ▕██████▌     ▏ 6/10 s  run  420 ops/s  2 faults  <run id>`. */
export function barLine(s: RunStatus): string {
  const fraction = s.durationMs > 0 ? Math.min(1, Math.max(0, s.elapsedMs / s.durationMs)) : 0;
  const cells = fraction * BAR_WIDTH;
  const full = Math.floor(cells);
  const half = cells - full >= 0.5 && full < BAR_WIDTH ? '▌' : '';
  const bar = `${'█'.repeat(full)}${half}`.padEnd(BAR_WIDTH, ' ');
  const at = s.position ? `run ${s.position.index}/${s.position.total} ` : '';
  const t = `${Math.round(s.elapsedMs / 1_000)}/${Math.round(s.durationMs / 1_000)} s`;
  return `${at}▕${bar}▏ ${t}  ${s.phase}  ${s.opsPerSecond} ops/s  ${s.faults} faults  ${s.run}`;
}

/** Progress as plain lines handed to `emit` (tests, embedding programs): no redraws. */
export function linesTo(emit: (line: string) => void): ProgressSink {
  return consoleProgress({ write: (text: string) => emit(text.replace(/\n$/, '')) });
}
