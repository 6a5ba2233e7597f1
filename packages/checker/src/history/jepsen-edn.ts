import type { Readable } from 'node:stream';
import {
  EdnFloat,
  EdnReader,
  EdnSet,
  EdnSymbol,
  type EdnValue,
  ednText,
  Keyword,
  keywordValue,
  Tagged,
} from './edn.js';
import { type EdnItem, EdnItemSplitter } from './edn-items.js';
import { EdnMap } from './edn-types.js';
import { HistoryParseError } from './errors.js';
import { readLines, textLines } from './lines.js';
import { DEFAULT_MAX_EVENT_BYTES, type ReadOptions } from './read-options.js';
import { showValue, writeValue } from './show.js';
import type { HistoryEvent, OpType, ProcessId } from './types.js';

const OP_TYPES: ReadonlySet<string> = new Set<OpType>(['invoke', 'ok', 'fail', 'info']);

/**
 * Reads a Jepsen EDN history: either one vector of op maps or op maps one after another (as in
 * porcupine's kv files). `{:process 0, :type :invoke, :f :write, :value 3}` becomes a `HistoryEvent`;
 * `:process`, `:type` and `:f` keywords become their names; a value keeps its EDN types (see `plain`). Without `:time` an event's time is its position in the file, which is the order Jepsen
 * recorded. `lines`, if given, receives the line each event starts on.
 */
export function parseJepsenEdn(
  text: string,
  file = '<input>',
  lines?: number[],
  options: Pick<ReadOptions, 'nilKeyword'> = {},
): HistoryEvent[] {
  const splitter = new EdnItemSplitter(file, Number.POSITIVE_INFINITY);
  const events: HistoryEvent[] = [];
  const nilKeyword = options.nilKeyword ?? true;
  const indices = new Map<number, number>();
  const keys: KeyNames = new Map();
  const add = (items: EdnItem[]) => {
    for (const item of items) {
      const event = itemToEvent(item, events.length, file, nilKeyword, indices, keys);
      if (event === undefined) continue;
      events.push(event);
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
  const nilKeyword = options.nilKeyword ?? true;
  const indices = new Map<number, number>();
  const keys: KeyNames = new Map();
  const events: [HistoryEvent, number][] = [];
  const add = (item: EdnItem) => {
    const event = itemToEvent(item, position, name, nilKeyword, indices, keys);
    if (event === undefined) return;
    position++;
    events.push([event, item.line]);
  };
  for await (const batch of readLines(source, name, options)) {
    for (const { text, line } of batch) for (const item of splitter.push(text, line)) add(item);
    yield* events.splice(0);
  }
  for (const item of splitter.end()) add(item);
  yield* events.splice(0);
}

/** One top-level item as an event; undefined when it held only a discarded (`#_`) value. */
function itemToEvent(
  item: EdnItem,
  position: number,
  file: string,
  nilKeyword: boolean,
  indices: Map<number, number>,
  keys: KeyNames,
): HistoryEvent | undefined {
  const reader = new EdnReader(item.text, file, item.line);
  if (reader.atEnd()) return undefined;
  const raw = reader.read();
  if (!reader.atEnd()) throw new HistoryParseError(file, reader.line, 'one op map', 'more data after it');
  return toEvent(raw, position, file, item.line, nilKeyword, indices, keys);
}

function toEvent(
  tagged: EdnValue,
  position: number,
  file: string,
  line: number,
  nilKeyword: boolean,
  indices: Map<number, number>,
  keys: KeyNames,
): HistoryEvent {
  const bad = (expected: string, found: EdnValue | undefined): never => {
    throw new HistoryParseError(file, line, expected, found === undefined ? 'nothing' : ednText(found));
  };
  // An op written as a record (`#jepsen.history.Op{…}`) is its map.
  const raw = tagged instanceof Tagged && tagged.value instanceof Map ? tagged.value : tagged;
  if (!(raw instanceof Map)) return bad('an op map like {:process 0, :type :invoke, :f :read}', raw);
  const process = keywordValue(raw, 'process');
  const type = keywordValue(raw, 'type');
  const f = keywordValue(raw, 'f');
  const rawTime = keywordValue(raw, 'time');
  const time = rawTime instanceof EdnFloat ? rawTime.value : rawTime;
  const index = keywordValue(raw, 'index');
  const key = keywordValue(raw, 'key');
  const error = keywordValue(raw, 'error');
  let pid: ProcessId;
  if (typeof process === 'number') pid = process;
  else if (process instanceof Keyword || process instanceof EdnSymbol) pid = process.name;
  else if (typeof process === 'string') pid = process;
  else return bad(':process as an integer or keyword', process);
  if (!(type instanceof Keyword) || !OP_TYPES.has(type.name))
    return bad(':type as :invoke, :ok, :fail or :info', type);
  if (!(f instanceof Keyword) && !(f instanceof EdnSymbol) && typeof f !== 'string')
    return bad(':f as a keyword', f);
  // Bigints are refused: positions and times must compare exactly as numbers.
  if (
    time !== undefined &&
    (typeof time !== 'number' || !Number.isFinite(time) || Math.abs(time) > Number.MAX_SAFE_INTEGER)
  )
    bad(':time as a number below 2^53', time);
  if (index !== undefined && !Number.isSafeInteger(index)) bad(':index as an integer below 2^53', index);
  if (typeof index === 'number') {
    // An :index orders the history: two events with one (a line repeated, a history written twice, as two
    // gzip members of one file) leave their order to chance. Bad input naming both lines, as in JSONL.
    const before = indices.get(index);
    if (before !== undefined)
      throw new HistoryParseError(
        file,
        line,
        `an :index of its own (${index} is already the index of line ${before})`,
        `:index ${index}`,
      );
    indices.set(index, line);
  }
  const event: HistoryEvent = {
    index: typeof index === 'number' ? index : position,
    time: typeof time === 'number' ? time : position,
    process: pid,
    type: type.name as OpType,
    f: f instanceof Keyword || f instanceof EdnSymbol ? f.name : (f as string),
    value: plain(keywordValue(raw, 'value') ?? null, nilKeyword),
  };
  if (key !== undefined && key !== null) {
    const value = plain(key, nilKeyword);
    const text = keyText(value);
    // An op's key is its text (a string as itself), so two keys Clojure's = tells apart may share one
    // (1 and "1", :a and ":a") and their ops would be checked as one key's: refused, naming both.
    const identity = writeValue(value, true) ?? 'null';
    const seen = keys.get(text);
    if (seen === undefined) keys.set(text, { identity, shown: showKey(value), line });
    else if (seen.identity !== identity)
      throw new HistoryParseError(
        file,
        line,
        "a name of each key's own (an op's key is named by its text)",
        `:key ${showKey(value)} and, on line ${seen.line}, :key ${seen.shown}, both named ${text}`,
      );
    event.key = text;
  }
  if (error !== undefined && error !== null) event.error = ednText(error);
  return event;
}

/** Each key text seen: the key's canonical text (its identity under Clojure's =), as shown, and its line. */
type KeyNames = Map<string, { identity: string; shown: string; line: number }>;

/** A key as EDN (a string quoted), for messages. */
function showKey(key: unknown): string {
  return writeValue(key, false) ?? 'nil';
}

function keyText(key: unknown): string {
  return typeof key === 'string' ? key : showValue(key);
}

/**
 * EDN value → history value: vectors and lists to arrays; strings, integers (bigints past 2^53),
 * booleans and nil as themselves (`:nil` to nil when `nilKeyword`, as knossos histories write it);
 * maps to `EdnMap`, and keywords, symbols, characters, floats, ratios, decimals, sets and tagged
 * literals as their own objects (edn-types.ts), so no two values Clojure's `=` tells apart read alike.
 */
export function plain(value: EdnValue, nilKeyword = true): unknown {
  if (value instanceof Keyword) return nilKeyword && value.name === 'nil' ? null : value;
  if (value instanceof Tagged) return new Tagged(value.tag, plain(value.value, nilKeyword));
  if (Array.isArray(value)) return value.map((v) => plain(v, nilKeyword));
  if (value instanceof EdnSet) return new EdnSet(value.items.map((v) => plain(v, nilKeyword)));
  if (value instanceof Map)
    return new EdnMap([...value].map(([k, v]) => [plain(k, nilKeyword), plain(v, nilKeyword)] as const));
  return value;
}
