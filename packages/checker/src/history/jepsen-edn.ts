import { EdnReader, type EdnValue, Keyword } from './edn.js';
import { HistoryParseError } from './errors.js';
import type { HistoryEvent, OpType, ProcessId } from './types.js';

const OP_TYPES: ReadonlySet<string> = new Set<OpType>(['invoke', 'ok', 'fail', 'info']);

/**
 * Reads a Jepsen EDN history: either one vector of op maps or op maps one after another (as in
 * porcupine's kv files). `{:process 0, :type :invoke, :f :write, :value 3}` becomes a `HistoryEvent`;
 * keywords become their names, vectors arrays, nil null, maps plain objects. Without `:time` an
 * event's time is its position in the file, which is the order Jepsen recorded. `lines`, if given,
 * receives the line each event starts on.
 */
export function parseJepsenEdn(text: string, file = '<input>', lines?: number[]): HistoryEvent[] {
  const reader = new EdnReader(text, file);
  const events: HistoryEvent[] = [];
  const close = reader.openSequence();
  for (;;) {
    if (close !== undefined ? reader.tryClose(close) : reader.atEnd()) break;
    if (close !== undefined && reader.atEnd()) {
      throw new HistoryParseError(file, reader.line, `"${close}" closing the history`, 'end of input');
    }
    const line = reader.line;
    const raw = reader.read();
    events.push(toEvent(raw, events.length, file, line));
    lines?.push(line);
  }
  if (!reader.atEnd())
    throw new HistoryParseError(file, reader.line, 'end of input after the history', 'more data');
  return events;
}

function toEvent(raw: EdnValue, position: number, file: string, line: number): HistoryEvent {
  const bad = (expected: string, found: EdnValue | undefined): never => {
    throw new HistoryParseError(file, line, expected, found === undefined ? 'nothing' : ednToString(found));
  };
  if (!(raw instanceof Map)) return bad('an op map like {:process 0, :type :invoke, :f :read}', raw);
  const process = raw.get(':process');
  const type = raw.get(':type');
  const f = raw.get(':f');
  const time = raw.get(':time');
  const index = raw.get(':index');
  const key = raw.get(':key');
  const error = raw.get(':error');
  let pid: ProcessId;
  if (typeof process === 'number') pid = process;
  else if (process instanceof Keyword || typeof process === 'string') pid = String(plain(process));
  else return bad(':process as an integer or keyword', process);
  if (!(type instanceof Keyword) || !OP_TYPES.has(type.name))
    return bad(':type as :invoke, :ok, :fail or :info', type);
  if (!(f instanceof Keyword) && typeof f !== 'string') return bad(':f as a keyword', f);
  if (time !== undefined && typeof time !== 'number') bad(':time as a number', time);
  if (index !== undefined && typeof index !== 'number') bad(':index as an integer', index);
  const event: HistoryEvent = {
    index: typeof index === 'number' ? index : position,
    time: typeof time === 'number' ? time : position,
    process: pid,
    type: type.name as OpType,
    f: f instanceof Keyword ? f.name : (f as string),
    value: plain(raw.get(':value') ?? null),
  };
  if (key !== undefined && key !== null) event.key = String(plain(key));
  if (error !== undefined && error !== null) event.error = ednToString(error);
  return event;
}

/** EDN value → plain JS value: keywords to their names, maps to objects, sets and lists to arrays. */
export function plain(value: EdnValue): unknown {
  if (value instanceof Keyword) return value.name;
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value)
      out[typeof k === 'string' && k.startsWith(':') ? k.slice(1) : String(plain(k))] = plain(v);
    return out;
  }
  return value;
}

function ednToString(value: EdnValue): string {
  if (value === null) return 'nil';
  if (value instanceof Keyword) return value.toString();
  if (Array.isArray(value)) return `[${value.map(ednToString).join(' ')}]`;
  if (value instanceof Map)
    return `{${[...value].map(([k, v]) => `${String(k)} ${ednToString(v)}`).join(', ')}}`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
