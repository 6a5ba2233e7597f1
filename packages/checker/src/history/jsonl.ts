import type { Readable, Writable } from 'node:stream';
import { HistoryParseError } from './errors.js';
import { JsonShapeError, parseJsonExact } from './json.js';
import { readLines, textLines } from './lines.js';
import type { ReadOptions } from './read-options.js';
import { showValue } from './show.js';
import type { HistoryEvent, OpType } from './types.js';

const OP_TYPES: ReadonlySet<string> = new Set<OpType>(['invoke', 'ok', 'fail', 'info']);

/**
 * Checks one decoded JSONL line against the history format and returns it as a `HistoryEvent`.
 * Throws `HistoryParseError` naming the field that is missing or has the wrong type.
 */
export function toHistoryEvent(raw: unknown, file: string, line: number): HistoryEvent {
  const bad = (expected: string, found: unknown): never => {
    throw new HistoryParseError(file, line, expected, showValue(found));
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('a JSON object', raw);
  const o = raw as Record<string, unknown>;
  // Bigints (integers past 2^53) are refused here: positions and times must compare exactly as numbers.
  if (!Number.isSafeInteger(o.index)) bad('"index" as an integer below 2^53', o.index);
  if (typeof o.time !== 'number' || !Number.isFinite(o.time) || Math.abs(o.time) > Number.MAX_SAFE_INTEGER)
    bad('"time" as a number of nanoseconds below 2^53', o.time);
  if (typeof o.process !== 'number' && typeof o.process !== 'string')
    bad('"process" as a number or string', o.process);
  if (typeof o.type !== 'string' || !OP_TYPES.has(o.type)) bad('"type" as invoke | ok | fail | info', o.type);
  if (typeof o.f !== 'string') bad('"f" as a string', o.f);
  if (!('value' in o)) bad('a "value" field (null when there is none)', raw);
  if (o.key !== undefined && typeof o.key !== 'string') bad('"key" as a string', o.key);
  if (o.error !== undefined && typeof o.error !== 'string') bad('"error" as a string', o.error);
  const event: HistoryEvent = {
    index: o.index as number,
    time: o.time as number,
    process: o.process as number | string,
    type: o.type as OpType,
    f: o.f as string,
    value: o.value,
  };
  if (o.key !== undefined) event.key = o.key as string;
  if (o.error !== undefined) event.error = o.error as string;
  return event;
}

function parseLine(text: string, file: string, line: number): HistoryEvent {
  let raw: unknown;
  try {
    raw = parseJsonExact(text);
  } catch (cause) {
    if (cause instanceof JsonShapeError)
      throw new HistoryParseError(file, line, cause.expected, cause.found, { cause });
    throw new HistoryParseError(file, line, 'one JSON object per line', text, { cause });
  }
  return toHistoryEvent(raw, file, line);
}

/**
 * Parses a whole history.jsonl text held in memory. Blank lines are allowed; anything else must be an
 * event. `lines`, if given, receives each event's line number.
 */
export function parseHistoryJsonl(text: string, file = '<input>', lines?: number[]): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const { text: raw, line } of textLines(text)) {
    const content = raw.trim();
    if (content !== '') {
      events.push(parseLine(content, file, line));
      lines?.push(line);
    }
  }
  return events;
}

/**
 * Streams events from a history.jsonl file path or a readable stream, one line at a time, so
 * histories larger than memory can be scanned. Throws `HistoryParseError` at the first bad line
 * (malformed JSON, a missing field, invalid UTF-8, a line over `options.maxEventBytes`),
 * `HistoryReadError` when the file cannot be read, `HistoryReadAbortedError` when `options.signal` aborts.
 */
export async function* readHistoryJsonl(
  source: string | Readable,
  file?: string,
  options: ReadOptions = {},
): AsyncGenerator<HistoryEvent> {
  for await (const [event] of readHistoryJsonlLines(source, file, options)) yield event;
}

/** `readHistoryJsonl` with each event's line number, for errors found later (pairing). */
export async function* readHistoryJsonlLines(
  source: string | Readable,
  file?: string,
  options: ReadOptions = {},
): AsyncGenerator<[HistoryEvent, number]> {
  const name = file ?? (typeof source === 'string' ? source : '<stream>');
  for await (const batch of readLines(source, name, options)) {
    const events: [HistoryEvent, number][] = [];
    for (const { text, line } of batch) {
      const content = text.trim();
      if (content !== '') events.push([parseLine(content, name, line), line]);
    }
    yield* events;
  }
}

/** One event as its history.jsonl line (without the newline), fields in the documented order. */
export function formatHistoryEvent(event: HistoryEvent): string {
  const { index, time, process, type, f, value, key, error } = event;
  const ordered: Record<string, unknown> = { index, time, process, type, f, value: value ?? null };
  if (key !== undefined) ordered.key = key;
  if (error !== undefined) ordered.error = error;
  return JSON.stringify(ordered, bigintAsString);
}

// Fences are bigints in the contract; JSON has no bigint, so they are written as decimal strings.
function bigintAsString(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * Appends events to a writable stream as history.jsonl, honouring backpressure: `write` resolves once
 * the stream can take more. `close()` ends the stream and resolves when everything is flushed.
 */
export class HistoryWriter {
  #closed = false;
  constructor(private readonly out: Writable) {}

  async write(event: HistoryEvent): Promise<void> {
    if (this.#closed) throw new Error('HistoryWriter is closed');
    if (!this.out.write(`${formatHistoryEvent(event)}\n`)) await waitForDrain(this.out);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await new Promise<void>((resolve, reject) => {
      this.out.once('error', reject);
      this.out.end(() => {
        this.out.off('error', reject);
        resolve();
      });
    });
  }
}

function waitForDrain(out: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onError = (err: Error) => done(err);
    const onClose = () => done(new Error('history stream closed before it drained'));
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}
