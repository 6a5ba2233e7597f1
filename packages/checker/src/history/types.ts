/** Kind of a history event, as in Jepsen: an invocation and exactly one completion per op. */
export type OpType = 'invoke' | 'ok' | 'fail' | 'info';

/** Who performed an event. Faults are recorded by the process `'nemesis'`. */
export type ProcessId = number | string;

/** One line of history.jsonl (DESIGN.md format); `time` = ns on one monotonic clock. */
export interface HistoryEvent {
  index: number;
  time: number;
  process: ProcessId;
  type: OpType;
  f: string;
  value: unknown;
  key?: string;
  error?: string;
}

/**
 * An invoke paired with its completion. `call`/`ret` are times (or event positions when the source has
 * no clock). `ret = Infinity` when the outcome is unknown (`info`, or never completed): the op may take
 * effect at any point after `call`.
 */
export interface Operation {
  id: number;
  process: ProcessId;
  f: string;
  key?: string;
  input: unknown;
  output: unknown;
  call: number;
  ret: number;
  status: 'ok' | 'info' | 'fail';
}

/** Outcome of a check: `unknown` means the checker ran out of time or memory — never a pass. */
export type Verdict = 'ok' | 'illegal' | 'unknown';
