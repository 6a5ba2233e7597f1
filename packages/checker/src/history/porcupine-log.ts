import { HistoryParseError } from './errors.js';
import type { Operation } from './types.js';

// `INFO  jepsen.util - 3	:invoke	:cas	[1 4]`: process, type, f, value, separated by tabs or spaces.
const LINE = /^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(invoke|ok|fail|info)\s+:(read|write|cas)\s+(.*?)\s*$/;
const INT = /^-?\d+$/;
const PAIR = /^\[(-?\d+)\s+(-?\d+)\]$/;

/**
 * Reads porcupine's Jepsen etcd log lines straight into operations, with porcupine's semantics (its
 * verdicts depend on them), which differ from Jepsen EDN:
 * - `:fail :cas [a b]` is a cas that completed and returned false (the compare failed): output `false`.
 * - `:fail :read :timed-out` is a read that completed with an unknown result: status `info`, finite `ret`.
 * - `:info` lines are ignored: the op stays open to the end (`ret = Infinity`, status `info`).
 * - an invoke with no completion stays open to the end.
 * Times are line numbers. Reads of `nil` return `null`.
 */
export function parsePorcupineLog(text: string, file = '<input>'): Operation[] {
  const ops: Operation[] = [];
  const open = new Map<number, Operation>();
  let line = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    line++;
    const content = text.slice(start, end);
    start = end + 1;
    if (content.trim() === '') continue;
    const m = LINE.exec(content);
    if (m === null) {
      throw new HistoryParseError(
        file,
        line,
        'INFO  jepsen.util - <process> :<type> :<read|write|cas> <value>',
        content,
      );
    }
    const process = Number(m[1]);
    const type = m[2] as string;
    const f = m[3] as string;
    const raw = m[4] as string;
    const bad = (expected: string): never => {
      throw new HistoryParseError(file, line, expected, raw);
    };
    if (type === 'invoke') {
      if (open.has(process)) bad(`a completion for process ${process}'s open op before its next invoke`);
      let input: unknown = null;
      if (f === 'write') input = INT.test(raw) ? Number(raw) : bad('an integer to write');
      else if (f === 'cas') input = parsePair(raw) ?? bad('[old new] integers');
      else if (raw !== 'nil') bad('nil as the value of a read invoke');
      const op: Operation = {
        id: ops.length,
        process,
        f,
        input,
        output: undefined,
        call: line,
        ret: Number.POSITIVE_INFINITY,
        status: 'info',
      };
      ops.push(op);
      open.set(process, op);
      continue;
    }
    if (type === 'info') continue; // outcome unknown: the op stays open to the end, as porcupine reads it
    const op = open.get(process);
    if (op === undefined || op.f !== f)
      bad(`an open :${f} invoke by process ${process} before this completion`);
    const done = op as Operation;
    open.delete(process);
    done.ret = line;
    if (type === 'ok') {
      done.status = 'ok';
      if (f === 'read')
        done.output = raw === 'nil' ? null : INT.test(raw) ? Number(raw) : bad('nil or an integer read');
      else if (f === 'cas') done.output = true;
      else done.output = null;
    } else if (f === 'cas') {
      done.status = 'ok';
      done.output = false;
    } else if (f === 'read' && raw === ':timed-out') {
      done.status = 'info';
    } else {
      bad(`a :fail line only for :cas or a :read that :timed-out (got :${f})`);
    }
  }
  return ops;
}

function parsePair(raw: string): [number, number] | undefined {
  const m = PAIR.exec(raw);
  return m === null ? undefined : [Number(m[1]), Number(m[2])];
}
