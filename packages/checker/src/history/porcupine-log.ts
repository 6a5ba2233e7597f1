import type { Readable } from 'node:stream';
import { HistoryParseError } from './errors.js';
import { exactNumber, JsonShapeError } from './json.js';
import { readLines, textLines } from './lines.js';
import type { ReadOptions } from './read-options.js';
import type { Operation, ProcessId } from './types.js';

// `INFO  jepsen.util - 3	:invoke	:cas	[1 4]`: process, type, f, value, separated by tabs or spaces.
const SHAPE = 'INFO  jepsen.util - <process> :<type> :<read|write|cas> <value>';
const TYPES: ReadonlySet<string> = new Set([':invoke', ':ok', ':fail', ':info']);
const FUNCTIONS: ReadonlySet<string> = new Set([':read', ':write', ':cas']);
const INT = /^-?\d+$/;
const PAIR = /^\[(-?\d+)[ \t]+(-?\d+)\]$/;

/**
 * Reads porcupine's Jepsen etcd log lines straight into operations, with porcupine's semantics (its
 * verdicts depend on them), which differ from Jepsen EDN:
 * - `:fail :cas [a b]` is a cas that completed and returned false (the compare failed): output `false`.
 * - `:fail :read :timed-out` is a read that completed with an unknown result: status `info`, finite `ret`.
 * - `:info` lines are ignored: the op stays open to the end (`ret = Infinity`, status `info`).
 * - an invoke with no completion stays open to the end.
 * Times are line numbers. Reads of `nil` return `null`. Integers stay exact (bigints past 2^53).
 * Each line is read in one linear pass (no backtracking regular expression over the whole line).
 */
export function parsePorcupineLog(text: string, file = '<input>'): Operation[] {
  const log = new PorcupineLog(file);
  for (const { text: content, line } of textLines(text)) log.add(content, line);
  return log.operations;
}

/**
 * `parsePorcupineLog` streamed from a file or stream, holding one line at a time. Throws as
 * `readLines` does (bad lines, unreadable files, an aborted `options.signal`). `onEvent` is called
 * once per non-blank line read (the CLI tells an empty file from one with nothing to judge).
 */
export async function readPorcupineLog(
  source: string | Readable,
  file?: string,
  options: ReadOptions = {},
  onEvent?: () => void,
): Promise<Operation[]> {
  const name = file ?? (typeof source === 'string' ? source : '<stream>');
  const log = new PorcupineLog(name);
  for await (const batch of readLines(source, name, options)) {
    for (const { text, line } of batch) {
      log.add(text, line);
      // Every non-blank line is an event, paired or not (a lone `:info` line is one, as in EDN).
      if (onEvent !== undefined && text.trim() !== '') onEvent();
    }
  }
  return log.operations;
}

/** Pairs porcupine log lines into operations as they are added. */
class PorcupineLog {
  readonly operations: Operation[] = [];
  readonly #open = new Map<ProcessId, Operation>();

  constructor(private readonly file: string) {}

  add(text: string, line: number): void {
    const content = text.trim();
    if (content === '') return;
    const fields = splitFields(content);
    if (fields === undefined) throw new HistoryParseError(this.file, line, SHAPE, content);
    const [processText, type, f, raw] = fields;
    const bad = (expected: string): never => {
      throw new HistoryParseError(this.file, line, expected, raw);
    };
    const exact = (digits: string): number | bigint => {
      try {
        return exactNumber(digits);
      } catch (error) {
        if (error instanceof JsonShapeError)
          throw new HistoryParseError(this.file, line, error.expected, error.found);
        throw error;
      }
    };
    const process = exact(processText);
    // A process id past 2^53 stays its digits, so two such processes never merge.
    const pid: ProcessId = typeof process === 'bigint' ? processText : process;
    if (type === 'invoke') {
      if (this.#open.has(pid))
        bad(`a completion for process ${processText}'s open op before its next invoke`);
      let input: unknown = null;
      if (f === 'write') input = INT.test(raw) ? exact(raw) : bad('an integer to write');
      else if (f === 'cas') input = parsePair(raw, exact) ?? bad('[old new] integers');
      else if (raw !== 'nil') bad('nil as the value of a read invoke');
      const op: Operation = {
        id: this.operations.length,
        process: pid,
        f,
        input,
        output: undefined,
        call: line,
        ret: Number.POSITIVE_INFINITY,
        status: 'info',
      };
      this.operations.push(op);
      this.#open.set(pid, op);
      return;
    }
    if (type === 'info') return; // outcome unknown: the op stays open to the end, as porcupine reads it
    const op = this.#open.get(pid);
    if (op === undefined || op.f !== f) {
      bad(`an open :${f} invoke by process ${processText} before this completion`);
      return;
    }
    this.#open.delete(pid);
    op.ret = line;
    if (type === 'ok') {
      op.status = 'ok';
      if (f === 'read')
        op.output = raw === 'nil' ? null : INT.test(raw) ? exact(raw) : bad('nil or an integer read');
      else if (f === 'cas') op.output = true;
      else op.output = null;
    } else if (f === 'cas') {
      op.status = 'ok';
      op.output = false;
    } else if (f === 'read' && raw === ':timed-out') {
      op.status = 'info';
    } else {
      bad(`a :fail line only for :cas or a :read that :timed-out (got :${f})`);
    }
  }
}

/**
 * `INFO jepsen.util - <process> :<type> :<f> <value>` (trimmed) → [process, type, f, value] without
 * the colons, or undefined when the line has another shape. Fields are split at runs of spaces and
 * tabs in one pass; the value is the rest of the line.
 */
function splitFields(line: string): [string, string, string, string] | undefined {
  const fields: string[] = [];
  let i = 0;
  while (fields.length < 6) {
    const start = i;
    while (i < line.length && !isBlank(line.charCodeAt(i))) i++;
    if (i === start || i === line.length) return undefined;
    fields.push(line.slice(start, i));
    while (i < line.length && isBlank(line.charCodeAt(i))) i++;
  }
  const [info, logger, dash, process, type, f] = fields as [string, string, string, string, string, string];
  if (info !== 'INFO' || logger !== 'jepsen.util' || dash !== '-') return undefined;
  if (!/^\d+$/.test(process) || !TYPES.has(type) || !FUNCTIONS.has(f)) return undefined;
  return [process, type.slice(1), f.slice(1), line.slice(i)];
}

function isBlank(c: number): boolean {
  return c === 32 || c === 9;
}

function parsePair(
  raw: string,
  exact: (digits: string) => number | bigint,
): [number | bigint, number | bigint] | undefined {
  const m = PAIR.exec(raw);
  return m === null ? undefined : [exact(m[1] as string), exact(m[2] as string)];
}
