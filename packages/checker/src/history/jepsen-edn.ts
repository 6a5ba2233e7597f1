import type { Readable } from 'node:stream';
import { EdnReader, type EdnValue, Keyword } from './edn.js';
import { type EdnItem, EdnItemSplitter } from './edn-items.js';
import { HistoryParseError } from './errors.js';
import { readLines, textLines } from './lines.js';
import { DEFAULT_MAX_EVENT_BYTES, type ReadOptions } from './read-options.js';
import type { HistoryEvent, OpType, ProcessId } from './types.js';

const OP_TYPES: ReadonlySet<string> = new Set<OpType>(['invoke', 'ok', 'fail', 'info']);

/**
 * Reads a Jepsen EDN history: either one vector of op maps or op maps one after another (as in
 * porcupine's kv files). `{:process 0, :type :invoke, :f :write, :value 3}` becomes a `HistoryEvent`;
 * keywords become their names, vectors arrays, nil null, maps plain objects, integers past 2^53
 * bigints. Without `:time` an event's time is its position in the file, which is the order Jepsen
 * recorded. `lines`, if given, receives the line each event starts on.
 */
export function parseJepsenEdn(text: string, file = '<input>', lines?: number[]): HistoryEvent[] {
  const splitter = new EdnItemSplitter(file, Number.POSITIVE_INFINITY);
  const events: HistoryEvent[] = [];
  const add = (items: EdnItem[]) => {
    for (const item of items) {
      events.push(itemToEvent(item, events.length, file));
      lines?.push(item.line);
    }
  };
  for (const { text: content, line } of textLines(text)) add(splitter.push(content, line));
  add(splitter.end());
  return events;
}

/**
 * `parseJepsenEdn` streamed from a file or stream: only the op being read is held, besides the events.
 * Yields each event with the line it starts on. Throws `HistoryParseError` for bad input (an op over
 * `options.maxEventBytes` characters included), `HistoryReadError` when the file cannot be read,
 * `HistoryReadAbortedError` when `options.signal` aborts.
 */
export async function* readJepsenEdn(
  source: string | Readable,
  file?: string,
  options: ReadOptions = {},
): AsyncGenerator<[HistoryEvent, number]> {
  const name = file ?? (typeof source === 'string' ? source : '<stream>');
  const splitter = new EdnItemSplitter(name, options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
  let position = 0;
  for await (const batch of readLines(source, name, options)) {
    const events: [HistoryEvent, number][] = [];
    for (const { text, line } of batch) {
      for (const item of splitter.push(text, line))
        events.push([itemToEvent(item, position++, name), item.line]);
    }
    yield* events;
  }
  for (const item of splitter.end()) yield [itemToEvent(item, position++, name), item.line];
}

function itemToEvent(item: EdnItem, position: number, file: string): HistoryEvent {
  const reader = new EdnReader(item.text, file, item.line);
  const raw = reader.read();
  if (!reader.atEnd()) throw new HistoryParseError(file, reader.line, 'one op map', 'more data after it');
  return toEvent(raw, position, file, item.line);
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
  // Bigints are refused: positions and times must compare exactly as numbers.
  if (
    time !== undefined &&
    (typeof time !== 'number' || !Number.isFinite(time) || Math.abs(time) > Number.MAX_SAFE_INTEGER)
  )
    bad(':time as a number below 2^53', time);
  if (index !== undefined && !Number.isSafeInteger(index)) bad(':index as an integer below 2^53', index);
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
    for (const [k, v] of value) {
      const key = typeof k === 'string' && k.startsWith(':') ? k.slice(1) : String(plain(k));
      // Defined, not assigned: a key named `__proto__` is data, not the object's prototype.
      Object.defineProperty(out, key, {
        value: plain(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
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
