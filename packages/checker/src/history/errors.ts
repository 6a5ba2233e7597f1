/**
 * A history could not be read. Names the file (or `<input>`), the 1-based line and what the reader
 * expected there, so a bad line is fixed rather than silently skipped.
 */
export class HistoryParseError extends Error {
  readonly code = 'invalid-history';
  constructor(
    readonly file: string,
    readonly line: number,
    readonly expected: string,
    readonly found: string,
    options?: ErrorOptions,
  ) {
    super(`${file}:${line}: expected ${expected}, found ${clip(found)}`, options);
  }
  override get name(): string {
    return 'HistoryParseError';
  }
}

/** Operations could not be paired (e.g. a completion with no invocation), or a model rejected an op's shape. */
export class HistoryShapeError extends Error {
  readonly code = 'invalid-history';
  constructor(
    readonly what: string,
    readonly detail: string,
  ) {
    super(`${what}: ${detail}`);
  }
  override get name(): string {
    return 'HistoryShapeError';
  }
}

/**
 * An event that does not pair: a completion with no open invoke, a second invoke while one is open,
 * or a completion of another function. `position` is the event's place in the history (0-based);
 * readers that know lines turn it into a `HistoryParseError` naming file and line.
 */
export class PairingError extends HistoryShapeError {
  constructor(
    readonly position: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`event at position ${position}`, `expected ${expected}, found ${found}`);
  }
  override get name(): string {
    return 'PairingError';
  }
}

/**
 * The history file could not be read at all or to its end (missing, a directory, no permission, an I/O
 * error): bad input, named by file and by the line reading stopped after.
 */
export class HistoryReadError extends Error {
  readonly code = 'invalid-history';
  constructor(
    readonly file: string,
    /** Lines read completely before the failure (0: none). */
    readonly line: number,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`cannot read ${file}${line > 0 ? ` after line ${line}` : ''}: ${reason}`, options);
  }
  override get name(): string {
    return 'HistoryReadError';
  }
}

/**
 * Reading stopped because the caller's signal aborted (its time budget ran out): not bad input and no
 * verdict, so callers answer `unknown`. `line` is the last line read.
 */
export class HistoryReadAbortedError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    options?: ErrorOptions,
  ) {
    super(`reading ${file} stopped after line ${line}: its time budget ran out`, options);
  }
  override get name(): string {
    return 'HistoryReadAbortedError';
  }
}

function clip(text: string): string {
  const oneLine = JSON.stringify(text);
  return oneLine.length > 80 ? `${oneLine.slice(0, 77)}…"` : oneLine;
}
