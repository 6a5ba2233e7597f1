import { isUtf8 } from 'node:buffer';
import { constants, open } from 'node:fs';
import { open as openHandle, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { HistoryParseError, HistoryReadAbortedError, HistoryReadError } from './errors.js';
import { DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_EVENT_BYTES, type ReadOptions } from './read-options.js';

/** One line of a history file, without its line end, and its 1-based number. */
export interface SourceLine {
  text: string;
  line: number;
}

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
const BYTE_ORDER_MARK = 0xfeff;

/**
 * Streams the lines of a file (or a readable stream of bytes or strings), the complete lines of each
 * chunk read at a time (one await per chunk, not per line), with bounded memory: only the chunk and
 * the line being read are held, and a line longer than `maxEventBytes` is bad input rather than a
 * string that grows until the process dies. Every line must be valid UTF-8 (rejected with its
 * number, never replaced); `\r\n` line ends and a leading byte order mark are accepted. Gzipped input
 * (its first two bytes 1f 8b, whatever its name) is decompressed on the fly, at most
 * `maxDecompressedBytes` (more is bad input: a gzip bomb). Read failures of the file itself (a
 * corrupt gzip stream too) become `HistoryReadError`; an aborted `signal` ends with `HistoryReadAbortedError`.
 */
export async function* readLines(
  source: string | Readable,
  file: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceLine[]> {
  const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  const signal = options.signal;
  let input: Readable;
  try {
    input = typeof source === 'string' ? await openFile(source) : source;
  } catch (error) {
    throw readError(file, 0, error);
  }
  // The unfinished line: the pieces of it that earlier chunks ended with.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  const longLine = (at: number) =>
    new HistoryParseError(file, at, `a line of at most ${max} bytes`, 'a longer line');
  const tooLong = (): never => {
    throw longLine(line + 1);
  };
  /**
   * The complete lines of `block` (which ends just before a line feed), decoded, up to the first bad
   * one (invalid UTF-8, too long): that one's error comes after the good lines before it, so the
   * first problem in the file is the one reported, whatever the chunk boundaries.
   */
  const split = (block: Buffer): { lines: string[]; error?: HistoryParseError } => {
    // A line feed byte never occurs inside a multi-byte UTF-8 sequence, so the block is valid UTF-8
    // exactly when each of its lines is: one check and one decoding for the whole block.
    let valid = block;
    let error: HistoryParseError | undefined;
    if (!isUtf8(block)) {
      let start = 0;
      for (let n = line + 1; ; n++) {
        const end = block.indexOf(NEWLINE, start);
        if (end === -1 || !isUtf8(block.subarray(start, end))) {
          error = new HistoryParseError(file, n, 'UTF-8 text', 'bytes that are not UTF-8');
          valid = block.subarray(0, start);
          break;
        }
        start = end + 1;
      }
    }
    const lines = error !== undefined && valid.length === 0 ? [] : valid.toString('utf8').split('\n');
    // `valid` ends with the line feed before the bad line: the split leaves an empty string after it.
    if (error !== undefined && lines.length > 0) lines.pop();
    for (const [i, l] of lines.entries()) {
      // Characters never outnumber bytes: only a line long in characters can be too long in bytes.
      if (l.length * 3 > max && Buffer.byteLength(l) > max) {
        return { lines: lines.slice(0, i), error: longLine(line + i + 1) };
      }
    }
    return { lines, ...(error === undefined ? {} : { error }) };
  };
  const maxDecompressed = options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  const chunks: AsyncIterator<unknown> = gunzipIfCompressed(input[Symbol.asyncIterator](), maxDecompressed);
  let finished = false;
  try {
    for (;;) {
      if (signal?.aborted) throw new HistoryReadAbortedError(file, line, { cause: signal.reason });
      let next: IteratorResult<unknown>;
      try {
        next = await nextChunk(chunks, signal);
      } catch (error) {
        if (error === ABORTED) throw new HistoryReadAbortedError(file, line, { cause: signal?.reason });
        if (error instanceof DecompressedTooLarge) {
          throw new HistoryParseError(
            file,
            line + 1,
            `at most ${maxDecompressed} bytes once decompressed`,
            'more (a gzip bomb?)',
          );
        }
        if (error instanceof CorruptGzip) {
          throw new HistoryParseError(
            file,
            line + 1,
            'gzip data that inflates',
            `corrupt gzip (${error.message})`,
          );
        }
        throw readError(file, line, error);
      }
      const chunk = next.done ? undefined : toBuffer(next.value);
      const last = chunk === undefined ? -1 : chunk.lastIndexOf(NEWLINE);
      if (chunk !== undefined && last === -1) {
        pendingBytes += chunk.length;
        if (pendingBytes > max) tooLong();
        // Copied: a stream may reuse its chunk buffers.
        pending.push(Buffer.from(chunk));
        continue;
      }
      if (chunk !== undefined && pendingBytes + chunk.indexOf(NEWLINE) > max) tooLong();
      // Complete lines: what was pending and this chunk up to its last line feed (at the end of input,
      // the last line, which has no line feed).
      const head = chunk === undefined ? [] : [chunk.subarray(0, last)];
      const block =
        pending.length === 0 ? (head[0] ?? Buffer.alloc(0)) : Buffer.concat([...pending, ...head]);
      pending = [];
      pendingBytes = 0;
      if (chunk !== undefined && last + 1 < chunk.length) {
        pendingBytes = chunk.length - last - 1;
        pending.push(Buffer.from(chunk.subarray(last + 1)));
      }
      if (chunk !== undefined || block.length > 0) {
        const { lines, error } = split(block);
        const batch: SourceLine[] = [];
        for (const raw of lines) {
          line++;
          let text = raw.charCodeAt(raw.length - 1) === CARRIAGE_RETURN ? raw.slice(0, -1) : raw;
          if (line === 1 && text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
          batch.push({ text, line });
        }
        if (batch.length > 0) yield batch;
        if (error !== undefined) throw error;
      }
      if (chunk === undefined) {
        finished = true;
        break;
      }
    }
  } finally {
    // Stopped early (bad line, abort, or the consumer broke off): release the file or stream, without
    // waiting: a read that never answers (a FIFO nobody writes) must not hold the caller too.
    if (!finished) chunks.return?.().catch(() => undefined);
    if (typeof source === 'string') input.destroy();
  }
}

/**
 * The lines of a text held in memory, read as `readLines` reads a file: a `\r` before the line
 * feed and a byte order mark opening the text are dropped, so both readers see the same lines.
 */
export function* textLines(text: string): Generator<SourceLine> {
  let start = 0;
  let line = 0;
  // As in a file, a final line feed ends the last line rather than starting an empty one.
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    line++;
    let content = text.slice(
      start,
      text.charCodeAt(end - 1) === CARRIAGE_RETURN && end > start ? end - 1 : end,
    );
    if (line === 1 && content.charCodeAt(0) === BYTE_ORDER_MARK) content = content.slice(1);
    yield { text: content, line };
    start = end + 1;
  }
}

/**
 * A file as a stream of bytes. A FIFO is opened without blocking and read through the event loop:
 * opened the usual way, a FIFO nobody writes blocks a thread of libuv's pool for good, which no
 * budget can cancel and which even keeps the process from exiting. Other files are opened without
 * blocking too: a pseudo file that blocks its reads (/proc/kmsg with nothing logged) then fails with
 * EAGAIN, bad input, rather than holding a pool thread and the process forever.
 */
async function openFile(path: string): Promise<Readable> {
  if (!(await stat(path)).isFIFO()) {
    const handle = await openHandle(path, constants.O_RDONLY | constants.O_NONBLOCK);
    return handle.createReadStream();
  }
  const fd = await new Promise<number>((resolve, reject) =>
    open(path, constants.O_RDONLY | constants.O_NONBLOCK, (error, opened) =>
      error ? reject(error) : resolve(opened),
    ),
  );
  return new Socket({ fd, readable: true, writable: false });
}

const ABORTED = Symbol('aborted');

/** The decompressed input passed its cap. */
class DecompressedTooLarge extends Error {}

/** zlib refused the data after gzip's magic bytes (corrupt, or cut off): bad input, not a failed read. */
class CorruptGzip extends Error {}

/** An error zlib raised on the data itself (`Z_DATA_ERROR`, `Z_BUF_ERROR` for a cut-off stream, …). */
const isZlibDataError = (error: unknown): error is Error => {
  const code: unknown = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return typeof code === 'string' && code.startsWith('Z_');
};

/**
 * The chunks as they are, or decompressed when they start with gzip's magic bytes (1f 8b): a stream
 * of decompressed chunks of at most zlib's chunk size each, counted, so past `limit` bytes the read
 * stops with `DecompressedTooLarge` before more is inflated. Concatenated gzip members are read whole.
 */
async function* gunzipIfCompressed(chunks: AsyncIterator<unknown>, limit: number): AsyncGenerator<Buffer> {
  let head = Buffer.alloc(0);
  while (head.length < 2) {
    const next = await chunks.next();
    if (next.done) {
      if (head.length > 0) yield head;
      return;
    }
    head = Buffer.concat([head, toBuffer(next.value)]);
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) {
    yield head;
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      yield toBuffer(next.value);
    }
  }
  async function* compressed(): AsyncGenerator<Buffer> {
    yield head;
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      yield toBuffer(next.value);
    }
  }
  const feed = Readable.from(compressed());
  const gunzip = createGunzip();
  feed.on('error', (error) => gunzip.destroy(error));
  feed.pipe(gunzip);
  let total = 0;
  try {
    for await (const out of gunzip as AsyncIterable<Buffer>) {
      total += out.length;
      if (total > limit) throw new DecompressedTooLarge();
      yield out;
    }
  } catch (error) {
    if (isZlibDataError(error)) throw new CorruptGzip(error.message);
    throw error;
  } finally {
    feed.destroy();
    gunzip.destroy();
  }
}

/** The next chunk, or a rejection with ABORTED as soon as `signal` aborts, even if the read never answers. */
function nextChunk(
  chunks: AsyncIterator<unknown>,
  signal: AbortSignal | undefined,
): Promise<IteratorResult<unknown>> {
  if (signal === undefined) return chunks.next();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    chunks.next().then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
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
