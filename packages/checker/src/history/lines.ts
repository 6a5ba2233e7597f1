import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { HistoryParseError, HistoryReadAbortedError, HistoryReadError } from './errors.js';
import { DEFAULT_MAX_EVENT_BYTES, type ReadOptions } from './read-options.js';

/** One line of a history file, without its line end, and its 1-based number. */
export interface SourceLine {
  text: string;
  line: number;
}

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

/**
 * Streams the lines of a file (or a readable stream of bytes or strings) with bounded memory: only
 * the line being read is held, and a line longer than `maxEventBytes` is bad input rather than a
 * string that grows until the process dies. Every line must be valid UTF-8 (rejected with its
 * number, never replaced); `\r\n` line ends and a leading byte order mark are accepted. Read failures
 * of the file itself become `HistoryReadError`; an aborted `signal` ends with `HistoryReadAbortedError`.
 */
export async function* readLines(
  source: string | Readable,
  file: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceLine> {
  const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  const signal = options.signal;
  const input = typeof source === 'string' ? createReadStream(source) : source;
  // The unfinished line: the pieces of it that earlier chunks ended with.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  const decode = (bytes: Buffer): string => {
    line++;
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === CARRIAGE_RETURN) end--;
    const body = end === bytes.length ? bytes : bytes.subarray(0, end);
    if (!isUtf8(body)) throw new HistoryParseError(file, line, 'UTF-8 text', 'bytes that are not UTF-8');
    const text = body.toString('utf8');
    return line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };
  const tooLong = (): never => {
    throw new HistoryParseError(file, line + 1, `a line of at most ${max} bytes`, 'a longer line');
  };
  const chunks: AsyncIterator<unknown> = input[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      if (signal?.aborted) throw new HistoryReadAbortedError(file, line, { cause: signal.reason });
      let next: IteratorResult<unknown>;
      try {
        next = await chunks.next();
      } catch (error) {
        throw readError(file, line, error);
      }
      if (next.done) {
        finished = true;
        break;
      }
      const chunk = toBuffer(next.value);
      let start = 0;
      for (;;) {
        const end = chunk.indexOf(NEWLINE, start);
        if (end === -1) break;
        if (pendingBytes + end - start > max) tooLong();
        let bytes = chunk.subarray(start, end);
        if (pending.length > 0) {
          bytes = Buffer.concat([...pending, bytes]);
          pending = [];
          pendingBytes = 0;
        }
        const text = decode(bytes);
        start = end + 1;
        yield { text, line };
        if (signal?.aborted) throw new HistoryReadAbortedError(file, line, { cause: signal.reason });
      }
      if (start < chunk.length) {
        pendingBytes += chunk.length - start;
        if (pendingBytes > max) tooLong();
        // Copied: a stream may reuse its chunk buffers.
        pending.push(Buffer.from(chunk.subarray(start)));
      }
    }
    if (pending.length > 0) {
      const text = decode(Buffer.concat(pending));
      pending = [];
      yield { text, line };
    }
  } finally {
    // Stopped early (bad line, abort, or the consumer broke off): release the file or stream.
    if (!finished) await chunks.return?.().catch(() => undefined);
    if (typeof source === 'string') input.destroy();
  }
}

function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError(`a history stream must carry bytes or strings, got ${typeof chunk}`);
}

function readError(file: string, line: number, error: unknown): HistoryReadError {
  const reason = error instanceof Error ? error.message : String(error);
  return new HistoryReadError(file, line, reason, { cause: error });
}
