import { closeSync, constants, fstatSync, openSync, readSync, statfsSync } from 'node:fs';
import {
  DEFAULT_MAX_EVENT_BYTES,
  type HistoryEvent,
  HistoryParseError,
  parseHistoryJsonl,
} from '@fencekit/checker';
import { z } from 'zod';
import type { CheckerReport } from '../check/check.js';
import type { FaultWindowSummary } from '../nemesis/nemesis.js';
import type { RunFigures, RunMeta, RunResults } from '../run/output.js';
import { WORKLOADS } from '../workloads/types.js';

/*
 * run.json, results.json and history.jsonl are read back by `fencekit check` and `fencekit report`
 * from directories anyone may have copied, edited or crafted: each is checked for its shape before a
 * page or a check uses it. A problem names the file and what was wrong, never the offending value
 * (a stored file may carry a password or markup meant for a terminal).
 */

/** Larger run.json/results.json files are not ours (results keep 50 violations per checker). */
const MAX_JSON_BYTES = 32 * 1024 * 1024;
/** history.jsonl is read into memory for the page: past this it is refused rather than exhausting memory. */
const MAX_HISTORY_BYTES = 256 * 1024 * 1024;
/** Deeper JSON than this is not ours, and the pages' figures would recurse through it. */
const MAX_DEPTH = 64;

/** A stored run file that cannot be used: `problem` says what was wrong with `file`. */
export class StoredRunError extends Error {
  readonly code = 'invalid-stored-run';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
  }
  override get name(): string {
    return 'StoredRunError';
  }
}

const verdict = z.enum(['ok', 'illegal', 'unknown']);
const count = z.number().int().min(0);
const observedPhase = z.object({ seen: z.boolean(), detail: z.string(), atMs: z.number() });

const faultWindow = z.object({
  fault: z.string(),
  target: z.object({
    node: z.string().optional(),
    halves: z.tuple([z.array(z.string()), z.array(z.string())]).optional(),
    client: z.number().int().optional(),
  }),
  applied: z.boolean(),
  error: z.string().optional(),
  evidence: z.record(z.string(), z.unknown()).optional(),
  observed: z.object({ started: observedPhase.optional(), healed: observedPhase.optional() }).optional(),
});

/** run.json as `writeRun` stores it; fields added later are optional so older runs still read. */
export const runMetaSchema = z.object({
  id: z.string(),
  startedAt: z.string(),
  backend: z.string(),
  workload: z.enum(WORKLOADS),
  faults: z.array(z.string()),
  scenario: z.string().nullable(),
  fencing: z.boolean(),
  safeFences: z.boolean(),
  provider: z.string(),
  clientSideOnly: z.boolean().optional(),
  // As `--clients` allows: the page draws one lane per client.
  clients: z.number().int().min(1).max(64),
  seed: z.number().int().min(0),
  durationMs: z.number().min(0),
  startedAtNs: z.number().optional(),
  elapsedMs: z.number().min(0),
  ttlMs: z.number().positive(),
  windowMs: z.number().min(0),
  stock: z.number().int(),
  tickMs: z.number().positive(),
  nodes: z.array(z.string()),
  faultsApplied: z.array(faultWindow),
  problems: z.array(z.string()),
}) satisfies z.ZodType<RunMeta>;

const checkerReport = z.object({
  verdict,
  violationCount: count,
  violations: z.array(z.unknown()),
  stats: z.unknown(),
  error: z.string().optional(),
  findings: z.array(z.string()).optional(),
});

/** results.json as `judgeRun` stores it. */
export const runResultsSchema = z.object({
  id: z.string(),
  checkedAt: z.string(),
  verdict,
  problems: z.array(z.string()),
  checkers: z.record(z.string(), checkerReport),
  summary: z.object({
    operations: count,
    ok: count,
    fail: count,
    info: count,
    opsPerSecond: z.number().min(0),
    faultsApplied: count,
    faultsFailed: count,
    // Runs recorded before it was kept have none.
    firstViolationMs: z.number().min(0).nullable().default(null),
  }),
}) satisfies z.ZodType<RunResults, unknown>;

/*
 * The schemas drop keys they do not know, so a field added to RunMeta, RunResults or what they hold
 * would vanish from pages rebuilt by `fencekit report`: these fail to compile until the field is added
 * to its schema above (with the type the pages may trust).
 */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
const schemasMatch: [
  SameKeys<z.output<typeof runMetaSchema>, RunMeta>,
  SameKeys<z.output<typeof faultWindow>, FaultWindowSummary>,
  SameKeys<z.output<typeof runResultsSchema>, RunResults>,
  SameKeys<z.output<typeof runResultsSchema>['summary'], RunFigures>,
  SameKeys<z.output<typeof checkerReport>, CheckerReport>,
] = [true, true, true, true, true];
void schemasMatch;

export function readRunMeta(path: string): RunMeta {
  return validate(path, runMetaSchema, readJson(path));
}

export function readRunResults(path: string): RunResults {
  return validate(path, runResultsSchema, readJson(path));
}

/** history.jsonl through the checker's reader; its errors say file, line and what was expected. */
export function readRunHistory(path: string): HistoryEvent[] {
  const text = decode(
    path,
    withShortLines(path, readBytes(path, MAX_HISTORY_BYTES), DEFAULT_MAX_EVENT_BYTES),
  );
  try {
    return parseHistoryJsonl(text, path);
  } catch (error) {
    // The reader's message quotes the bad line: only where and what is kept.
    if (error instanceof HistoryParseError)
      throw new StoredRunError(path, `line ${error.line}: expected ${error.expected}`);
    throw new StoredRunError(path, `not a history (${(error as Error).name})`);
  }
}

/**
 * File systems whose files are made up by the kernel as they are read: their sizes say 0 whatever they yield
 * (/proc/self/pagemap yields gigabytes, /proc/kmsg blocks until the kernel logs). fencekit never stores a run
 * there, so a stored file that resolves into one is refused before it is opened.
 */
const PSEUDO_FILE_SYSTEMS = new Set([
  0x9fa0, // proc
  0x62656572, // sysfs
  0x64626720, // debugfs
  0x74726163, // tracefs
  0x73636673, // securityfs
  0x27e0eb, // cgroup
  0x63677270, // cgroup2
  0x6165676c, // pstore
  0xcafe4a11, // bpf
  0x42494e4d, // binfmt_misc
]);

const notOurs = (path: string, why: string) => new StoredRunError(path, `not a file fencekit wrote (${why})`);
const cannotRead = (path: string, error: unknown) =>
  new StoredRunError(path, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);

/**
 * A stored file's text, read in bounded time and memory: only a regular file (checked on the open
 * descriptor, so a swap after the check cannot slip a FIFO or device in), opened without blocking (a FIFO
 * or a blocking pseudo file answers EAGAIN instead of holding the process), and never more than its size
 * says plus one byte: a file yielding more than its size is a pseudo file or one being written, refused.
 */
function readBytes(path: string, maxBytes: number): Buffer {
  let fsType: number;
  try {
    fsType = Number(statfsSync(path).type);
  } catch (error) {
    throw cannotRead(path, error);
  }
  if (PSEUDO_FILE_SYSTEMS.has(fsType)) throw notOurs(path, 'a kernel pseudo file');
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw cannotRead(path, error);
  }
  let bytes: Buffer;
  try {
    const stat = fstatSync(fd);
    // A FIFO or a device (/dev/zero) would block or never end: only regular files are read.
    if (!stat.isFile()) throw new StoredRunError(path, 'not a regular file');
    if (stat.size > maxBytes) throw new StoredRunError(path, `larger than ${maxBytes} bytes`);
    const buffer = Buffer.allocUnsafe(stat.size + 1);
    let read = 0;
    for (;;) {
      const n = readSync(fd, buffer, read, buffer.length - read, null);
      if (n === 0) break;
      read += n;
      if (read > stat.size) throw notOurs(path, 'it yields more bytes than its size');
    }
    bytes = buffer.subarray(0, read);
  } catch (error) {
    if (error instanceof StoredRunError) throw error;
    throw cannotRead(path, error);
  } finally {
    closeSync(fd);
  }
  return bytes;
}

function decode(path: string, bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new StoredRunError(path, 'not valid UTF-8');
  }
}

/**
 * `bytes` if none of its lines is longer than `maxLine` (the checker's reader's cap), found on the bytes
 * before anything is decoded: 250 MB of NUL bytes (one line) was decoded, split and parsed whole, which took
 * 2 GB and 20 s to end in a RangeError.
 */
function withShortLines(path: string, bytes: Buffer, maxLine: number): Buffer {
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    let end = bytes.indexOf(10, start);
    if (end === -1) end = bytes.length;
    if (end - start > maxLine) throw new StoredRunError(path, `line ${line}: longer than ${maxLine} bytes`);
    start = end + 1;
  }
  return bytes;
}

function readJson(path: string): unknown {
  const text = decode(path, readBytes(path, MAX_JSON_BYTES));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text: not repeated.
    throw new StoredRunError(path, 'not valid JSON');
  }
  if (depthOver(value, MAX_DEPTH)) throw new StoredRunError(path, `nested deeper than ${MAX_DEPTH} levels`);
  return value;
}

/** Iterative, so a hostile nesting cannot overflow the stack here either. */
function depthOver(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    // Only objects go on the stack, without copying the values out: a list of millions of numbers
    // (a violation naming 5 M processes) once took gigabytes here.
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const inner: unknown = v[i];
        if (inner !== null && typeof inner === 'object') stack.push([inner, depth + 1]);
      }
      continue;
    }
    for (const key in v) {
      const inner: unknown = (v as Record<string, unknown>)[key];
      if (inner !== null && typeof inner === 'object') stack.push([inner, depth + 1]);
    }
  }
  return false;
}

function validate<T>(path: string, schema: z.ZodType<T, unknown>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  // zod's messages name the expected type or options, not the value found.
  const issues = parsed.error.issues.slice(0, 3).map((i) => {
    // Keys come from the file too: only plain ones are named.
    const where = i.path.length
      ? i.path.map((k) => (/^[\w-]{1,40}$/.test(String(k)) ? String(k) : '…')).join('.')
      : 'the file';
    return `${where}: ${i.message}`;
  });
  throw new StoredRunError(path, issues.join('; '));
}
