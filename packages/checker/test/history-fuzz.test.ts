import { isUtf8 } from 'node:buffer';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import {
  HistoryParseError,
  HistoryShapeError,
  parseHistoryJsonl,
  parseJepsenEdn,
  parsePorcupineLog,
  readHistoryJsonl,
  readJepsenEdn,
  readPorcupineLog,
} from '../src/history/index.js';

/**
 * Fuzzing every history reader, bounded in time so it runs in CI: valid histories, then mutated
 * (characters and bytes inserted, deleted, duplicated; hostile tokens spliced in: deep nesting, huge
 * integers, control characters, invalid UTF-8, endless runs of spaces). Whatever the input, a reader
 * returns events or throws its typed error, within a bounded time, and the streaming reader agrees
 * with the in-memory one; the whole CLI answers with an exit code 0-3, never a crash, and prints no
 * raw control character. Each reader gets FUZZ_MS of random inputs (a fresh seed each run; a failure
 * prints its seed and the shrunk input).
 */
const FUZZ_MS = 2000;
const PER_INPUT_MS = 2000;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fencekit-fuzz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const integer = fc.oneof(
  fc.integer({ min: -3, max: 5 }),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.constantFrom(2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n),
);
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 }));

/** A register op as [process, type, f, value text]: invokes and completions, some unpaired. */
interface Step {
  process: number;
  type: 'invoke' | 'ok' | 'fail' | 'info';
  f: 'read' | 'write' | 'cas';
  value: bigint | number | null;
  other: bigint | number;
  key: string;
}
const step: fc.Arbitrary<Step> = fc.record({
  process: fc.integer({ min: 0, max: 3 }),
  type: fc.constantFrom('invoke', 'invoke', 'ok', 'fail', 'info'),
  f: fc.constantFrom('read', 'write', 'cas'),
  value: fc.option(integer),
  other: integer,
  key: text,
});

/** Ops invoked and completed one after another (completions at random later places): pairs well. */
const pairedSteps: fc.Arbitrary<Step[]> = fc
  .array(fc.tuple(step, fc.constantFrom('ok', 'ok', 'fail', 'info') as fc.Arbitrary<Step['type']>, integer), {
    maxLength: 8,
  })
  .map((ops) =>
    ops.flatMap(([s, done, read], i) => [
      { ...s, process: i, type: 'invoke' as const, value: s.f === 'read' ? null : s.value },
      { ...s, process: i, type: done, value: s.f === 'read' ? read : s.value },
    ]),
  );

const history: fc.Arbitrary<Step[]> = fc.oneof(fc.array(step, { maxLength: 12 }), pairedSteps);

function jsonl(steps: Step[]): string {
  return steps
    .map((s, i) => {
      const value = s.f === 'cas' ? `[${s.value ?? 0},${s.other}]` : String(s.value ?? 'null');
      return `{"index":${i},"time":${i * 10},"process":${s.process},"type":"${s.type}","f":"${s.f}","value":${value},"key":${JSON.stringify(s.key)}}`;
    })
    .join('\n');
}

function edn(steps: Step[]): string {
  const items = steps.map((s) => {
    const value = s.f === 'cas' ? `[${s.value ?? 0} ${s.other}]` : String(s.value ?? 'nil');
    return `{:process ${s.process}, :type :${s.type}, :f :${s.f}, :value ${value}, :key ${JSON.stringify(s.key)}} ; op`;
  });
  return `[${items.join('\n ')}\n]`;
}

function porcupineLog(steps: Step[]): string {
  return steps
    .map((s) => {
      const value = s.f === 'cas' ? `[${s.value ?? 0} ${s.other}]` : String(s.value ?? 'nil');
      return `INFO  jepsen.util - ${s.process}\t:${s.type}\t:${s.f}\t${value}`;
    })
    .join('\n');
}

/** Hostile pieces spliced into otherwise valid text. */
const hostile = fc.oneof(
  fc.constantFrom(
    '['.repeat(5000),
    '{'.repeat(300),
    '#{'.repeat(200),
    '"',
    '\\',
    ']',
    '}',
    ')',
    '\n',
    '\r\n',
    ' '.repeat(20_000),
    '\t'.repeat(5000),
    '\u001b[2J',
    '\u009b31m',
    '\u202e',
    '\u0000',
    '\ufeff',
    ';',
    '#inst "2026"',
    '#_',
    '#object[java.lang.Thread 0x1f "t"]',
    '#jepsen.history.Op',
    '#t '.repeat(300),
    '#_ '.repeat(300),
    'clojure.core$fn__1',
    '##Inf',
    '\\u00e9',
    '0xff',
    '\\newline',
    '123456789012345678901234567890',
    '1e999',
    '-',
    ':',
    'nil',
    '"__proto__"',
    ':__proto__',
  ),
  fc.string({ maxLength: 8 }),
);

type Edit =
  | { kind: 'insert'; at: number; piece: string }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'duplicate'; at: number; length: number };
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), piece: hostile }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant('duplicate' as const),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 80 }),
  }),
);

function mutate(source: string, edits: Edit[]): string {
  let s = source;
  for (const e of edits) {
    const at = s.length === 0 ? 0 : e.at % (s.length + 1);
    if (e.kind === 'insert') s = s.slice(0, at) + e.piece + s.slice(at);
    else if (e.kind === 'delete') s = s.slice(0, at) + s.slice(at + e.length);
    else s = s.slice(0, at + e.length) + s.slice(at, at + e.length) + s.slice(at + e.length);
  }
  return s;
}

/** Bytes to read: mutated text, sometimes with raw invalid UTF-8 bytes, or plain random bytes. */
function input(render: (steps: Step[]) => string): fc.Arbitrary<Buffer> {
  const mutated = fc
    .tuple(
      history,
      fc.array(edit, { maxLength: 4 }),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom(0xff, 0xc3, 0xe2, 0x80, 0xed)), { maxLength: 2 }),
    )
    .map(([steps, edits, bytes]) => {
      let buffer = Buffer.from(mutate(render(steps), edits));
      for (const [at, byte] of bytes) {
        const i = buffer.length === 0 ? 0 : at % buffer.length;
        buffer = Buffer.concat([buffer.subarray(0, i), Buffer.from([byte]), buffer.subarray(i)]);
      }
      return buffer;
    });
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
  );
}

/** Cuts bytes into chunks of the given sizes (cycled), as a stream would deliver them. */
function chunked(bytes: Buffer, sizes: number[]): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const size = sizes[k % sizes.length] as number;
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return Readable.from(chunks);
}

/** The first line that is not valid UTF-8 and the byte offset it starts at (the whole input if none). */
function firstInvalidLine(bytes: Buffer): { line?: number; offset: number } {
  let start = 0;
  for (let line = 1; ; line++) {
    const end = bytes.indexOf(10, start);
    if (!isUtf8(bytes.subarray(start, end === -1 ? bytes.length : end))) return { line, offset: start };
    if (end === -1) return { offset: bytes.length };
    start = end + 1;
  }
}

function isTyped(error: unknown): boolean {
  return error instanceof HistoryParseError || error instanceof HistoryShapeError;
}

/** The outcome of a read: the events (as comparable JSON) or the typed error's message. */
async function outcome(read: () => Promise<unknown[]> | unknown[]): Promise<string> {
  try {
    const events = await read();
    return JSON.stringify(events, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  } catch (error) {
    if (!isTyped(error)) throw error;
    return `error: ${(error as Error).message}`;
  }
}

async function collect<T>(events: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of events) out.push(e);
  return out;
}

function unsafe(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 9 && c !== 10) || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e))
      return true;
    if (c >= 0x2066 && c <= 0x2069) return true;
  }
  return false;
}

const readers = {
  jsonl: {
    render: jsonl,
    memory: (t: string) => parseHistoryJsonl(t, 'f'),
    stream: (s: Readable) => collect(readHistoryJsonl(s, 'f')),
    model: 'cas-register',
  },
  edn: {
    render: edn,
    memory: (t: string) => parseJepsenEdn(t, 'f'),
    stream: async (s: Readable) => (await collect(readJepsenEdn(s, 'f'))).map(([e]) => e),
    model: 'cas-register',
  },
  'porcupine-log': {
    render: porcupineLog,
    memory: (t: string) => parsePorcupineLog(t, 'f'),
    stream: (s: Readable) => readPorcupineLog(s, 'f'),
    model: 'cas-register',
  },
} as const;

describe.each(Object.entries(readers))('fuzzing the %s reader', (format, reader) => {
  it(`reads or refuses with a typed error, streamed as in memory, in bounded time (${FUZZ_MS} ms of inputs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        input(reader.render),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 5 }),
        async (bytes, sizes) => {
          const started = performance.now();
          const streamed = await outcome(() => reader.stream(chunked(bytes, sizes)));
          // In memory there is no byte-level check: it reads the lines before the first invalid one, and
          // must find the same error in them, or none (then the stream's error is the invalid line).
          // gzip's magic bytes make the stream a compressed file, which the in-memory text reader never
          // decompresses: only a typed outcome is required of it (outcome() rethrows anything else).
          if (bytes[0] === 0x1f && bytes[1] === 0x8b) return;
          const bad = firstInvalidLine(bytes);
          const inMemory = await outcome(() => reader.memory(bytes.subarray(0, bad.offset).toString('utf8')));
          if (
            bad.line === undefined ||
            (inMemory.startsWith('error:') && !inMemory.endsWith('found "end of input"'))
          ) {
            expect(streamed).toBe(inMemory);
          } else {
            expect(streamed).toBe(
              `error: f:${bad.line}: expected UTF-8 text, found "bytes that are not UTF-8"`,
            );
          }
          expect(performance.now() - started).toBeLessThan(PER_INPUT_MS);
        },
      ),
      { interruptAfterTimeLimit: FUZZ_MS, numRuns: 1_000_000 },
    );
  });

  it(`answers 0-3 from the CLI, never a crash, with no raw control character (${FUZZ_MS} ms of inputs)`, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(input(reader.render), fc.boolean(), async (bytes, json) => {
        const path = join(dir, `in-${n++}`);
        await writeFile(path, bytes);
        let out = '';
        let err = '';
        const started = performance.now();
        const code = await main(
          [
            path,
            '--format',
            format,
            '--model',
            reader.model,
            '--timeout',
            '200ms',
            ...(json ? ['--json'] : []),
          ],
          {
            stdout: (t) => (out += t),
            stderr: (t) => (err += t),
          },
        );
        expect([0, 1, 2, 3]).toContain(code);
        expect(code === 3 ? err : out).not.toBe('');
        expect(unsafe(out) || unsafe(err)).toBe(false);
        if (json && code !== 3) JSON.parse(out);
        expect(performance.now() - started).toBeLessThan(PER_INPUT_MS);
        await rm(path);
      }),
      { interruptAfterTimeLimit: FUZZ_MS, numRuns: 1_000_000 },
    );
  });
});
