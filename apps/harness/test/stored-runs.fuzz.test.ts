import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { recheckRun } from '../src/check/recheck.js';
import { rebuildSite } from '../src/report/rebuild.js';
import { readStoredRuns, writeSiteIndex } from '../src/report/site.js';
import { StoredRunError } from '../src/report/stored-run.js';
import type { ReportWarning } from '../src/report/warnings.js';
import { runMeta, runResults } from './support/stored-runs.js';

/**
 * Fuzzing the stored run files as `fencekit check` and `fencekit report` read them (#14): valid
 * run.json, results.json and history.jsonl, then mutated (values swapped for others of any type, keys
 * dropped or added, deep nesting, markup and control characters in strings, the text cut, bytes
 * spliced in or the whole file random). Whatever is stored, every run is either read or skipped with
 * a typed warning naming its file, in bounded time, never a crash; the pages written from what was
 * read carry no markup from the files. FUZZ_MS of random cases per property, a fresh seed each run
 * (a failure prints its seed and the shrunk case).
 */
const FUZZ_MS = 3_000;
const PER_CASE_MS = 2_000;

const scratch = mkdtempSync(join(tmpdir(), 'fencekit-stored-fuzz-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let cases = 0;
function freshRoot(): string {
  const root = join(scratch, `case-${cases++}`);
  mkdirSync(root);
  return root;
}

/** Strings that are markup (tagged `fk-` so any that reaches a page unescaped is found) or odd text. */
const hostileText = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), {
  weight: 3,
  arbitrary: fc.constantFrom(
    '<fk-tag>',
    '"><fk-attr x=1>',
    "'><fk-single>",
    '</title><fk-title>',
    '<fk-svg onload=1>',
    '&amp;<fk-amp>',
    '\u001b[31mred',
    '\ud800',
    '',
    'constructor',
    '__proto__',
    'toString',
  ),
});
const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileText,
    fc.integer(),
    fc.double(),
    // Times a history may hold but no run lasts: 2^53 - 1 ns is 104 days.
    fc.constantFrom(null, true, false, 0, -1, 1e300, 2 ** 53 - 1, 2 ** 53 + 2, 65, 1e9),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(hostileText, tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** One change to a JSON tree: `path` picks children by index (modulo their count). */
interface Mutation {
  path: number[];
  op: 'replace' | 'delete' | 'add' | 'nest';
  key: string;
  value: unknown;
}
const mutation: fc.Arbitrary<Mutation> = fc.record({
  path: fc.array(fc.nat({ max: 40 }), { maxLength: 5 }),
  op: fc.constantFrom('replace', 'replace', 'delete', 'add', 'nest'),
  key: hostileText,
  value: anyJson,
});

function mutate(tree: unknown, m: Mutation): unknown {
  const root = { tree: structuredClone(tree) } as Record<string, unknown>;
  let parent: Record<string, unknown> | unknown[] = root;
  let key: string | number = 'tree';
  for (const step of m.path) {
    const here: unknown = (parent as Record<string | number, unknown>)[key];
    if (here === null || typeof here !== 'object') break;
    const keys: (string | number)[] = Array.isArray(here) ? here.map((_, i) => i) : Object.keys(here);
    if (keys.length === 0) break;
    parent = here as Record<string, unknown>;
    key = keys[step % keys.length]!;
  }
  const target = parent as Record<string | number, unknown>;
  if (m.op === 'replace') target[key] = m.value;
  else if (m.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete target[key];
  } else if (m.op === 'add') {
    const here = target[key];
    if (here !== null && typeof here === 'object' && !Array.isArray(here))
      (here as Record<string, unknown>)[m.key] = m.value;
    else target[key] = { [m.key]: m.value };
  } else {
    let deep: unknown = m.value;
    for (let i = 0; i < 200; i++) deep = [deep];
    target[key] = deep;
  }
  return root.tree;
}

/** Text-level damage after the JSON was written. */
type Damage =
  | { kind: 'none' }
  | { kind: 'cut'; at: number }
  | { kind: 'splice'; at: number; bytes: Uint8Array }
  | { kind: 'random'; bytes: Uint8Array };
const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('splice' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('random' as const), bytes: fc.uint8Array({ maxLength: 64 }) }),
);
function damaged(text: string | undefined, d: Damage): Buffer {
  // A tree mutated away entirely (its root deleted) is written as an empty file.
  const bytes = Buffer.from(text ?? '');
  if (d.kind === 'none') return bytes;
  if (d.kind === 'random') return Buffer.from(d.bytes);
  const at = bytes.length === 0 ? 0 : d.at % bytes.length;
  if (d.kind === 'cut') return bytes.subarray(0, at);
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(d.bytes), bytes.subarray(at)]);
}

/** A valid history of a short mutex run with markup in its values, as events (one per line). */
function baseHistory(text: string): Record<string, unknown>[] {
  return [
    { index: 0, time: 1, process: 'resource', type: 'ok', f: 'init', value: { stock: 100 } },
    { index: 1, time: 5, process: 0, type: 'invoke', f: 'acquire', value: { name: text } },
    { index: 2, time: 9, process: 0, type: 'ok', f: 'acquire', value: { fence: 1, note: text } },
    { index: 3, time: 10, process: 'nemesis', type: 'ok', f: 'start', value: { fault: text, node: text } },
    { index: 4, time: 12, process: 'resource', type: 'ok', f: 'write', value: { client: 0, fence: 1 } },
    { index: 5, time: 14, process: 0, type: 'invoke', f: 'release', value: null, key: text },
    { index: 6, time: 18, process: 0, type: 'ok', f: 'release', value: null },
    { index: 7, time: 20, process: 1, type: 'invoke', f: text, value: text },
    { index: 8, time: 22, process: 1, type: 'ok', f: text, value: text },
    { index: 9, time: 30, process: 'nemesis', type: 'ok', f: 'stop', value: { fault: 'all' } },
  ];
}

interface StoredCase {
  text: string;
  meta: Mutation[];
  results: Mutation[];
  history: Mutation[];
  damage: [Damage, Damage, Damage];
}
const storedCase: fc.Arbitrary<StoredCase> = fc.record({
  text: hostileText,
  meta: fc.array(mutation, { maxLength: 3 }),
  results: fc.array(mutation, { maxLength: 3 }),
  history: fc.array(mutation, { maxLength: 3 }),
  damage: fc.tuple(damage, damage, damage),
});

function writeCase(root: string, name: string, c: StoredCase): string {
  const dir = join(root, name);
  mkdirSync(dir);
  const meta = c.meta.reduce(mutate, runMeta(name, { backend: c.text, faults: [c.text], nodes: [c.text] }));
  const results = c.results.reduce(
    mutate,
    runResults(name, {
      verdict: 'illegal',
      problems: [c.text],
      checkers: {
        [c.text]: {
          verdict: 'illegal',
          violationCount: 1,
          violations: [{ kind: c.text, index: 2, from: 5, to: 20, processes: [0] }],
          stats: { [c.text]: c.text, nested: { list: [c.text, 1] } },
          error: c.text,
        },
      },
    }),
  );
  const history = c.history.reduce(mutate, baseHistory(c.text));
  const lines = Array.isArray(history)
    ? history.map((e) => JSON.stringify(e) ?? '').join('\n')
    : JSON.stringify(history);
  writeFileSync(join(dir, 'run.json'), damaged(JSON.stringify(meta), c.damage[0]));
  writeFileSync(join(dir, 'results.json'), damaged(JSON.stringify(results), c.damage[1]));
  writeFileSync(join(dir, 'history.jsonl'), damaged(`${lines}\n`, c.damage[2]));
  return dir;
}

const KINDS = new Set(['skipped-run', 'foreign-page']);

/** Markup or a control character (C0, DEL, C1) in a message: a stored value echoed. */
function leaksStored(text: string): boolean {
  if (text.includes('<fk-')) return true;
  return [...text].some((c) => {
    const code = c.codePointAt(0)!;
    return code < 0x20 || (code >= 0x7f && code <= 0x9f);
  });
}

/** The pages fencekit wrote under `root`: none may carry a tag from the stored files. */
function expectNoMarkupFromFiles(root: string): void {
  const pages = [join(root, 'index.html'), ...readdirSync(root).map((d) => join(root, d, 'index.html'))];
  for (const path of pages) {
    let html: string;
    try {
      html = readFileSync(path, 'utf8');
    } catch {
      continue; // a skipped run has no page
    }
    // A stored name looked up in a plain object ('constructor') once printed a function's source.
    expect(html, path).not.toMatch(/<fk-|<script|\[native code\]/i);
  }
}

function expectWarningsTyped(warnings: readonly ReportWarning[], root: string): void {
  for (const w of warnings) {
    expect(KINDS.has(w.kind)).toBe(true);
    expect(w.file.startsWith(root)).toBe(true);
    // Never the stored value: no markup, no control character from the files.
    expect(leaksStored(w.problem)).toBe(false);
  }
}

describe('stored run files, fuzzed', () => {
  it('report reads or skips every run with a typed warning, in bounded time, and escapes what it read', () => {
    fc.assert(
      fc.property(fc.array(storedCase, { minLength: 1, maxLength: 3 }), (stored) => {
        const root = freshRoot();
        const names = stored.map((c, i) => {
          writeCase(root, `run-${i}`, c);
          return `run-${i}`;
        });
        const warnings: ReportWarning[] = [];
        const warn = (w: ReportWarning) => warnings.push(w);
        const started = performance.now();
        const { runs, skipped } = readStoredRuns(root);
        rebuildSite(root, warn);
        writeSiteIndex(root, { warn });
        expect(performance.now() - started).toBeLessThan(PER_CASE_MS);
        for (const name of names) {
          const read = runs.some((r) => r.dir === name);
          const left = skipped.some((w) => w.file.startsWith(join(root, name)));
          expect(read !== left, `${name} read or skipped, not both or neither`).toBe(true);
        }
        expectWarningsTyped([...skipped, ...warnings], root);
        expectNoMarkupFromFiles(root);
        rmSync(root, { recursive: true, force: true });
      }),
      { interruptAfterTimeLimit: FUZZ_MS, numRuns: 1_000_000 },
    );
  });

  it('check re-judges a mutated run or refuses it as a StoredRunError, in bounded time', async () => {
    await fc.assert(
      fc.asyncProperty(storedCase, async (c) => {
        const root = freshRoot();
        const dir = writeCase(root, 'run', c);
        writeSiteIndex(root, { warn: () => {} });
        const warnings: ReportWarning[] = [];
        const started = performance.now();
        const outcome = await recheckRun(dir, (w) => warnings.push(w)).catch((e: unknown) => e);
        expect(performance.now() - started).toBeLessThan(PER_CASE_MS);
        if (typeof outcome !== 'string') {
          expect(outcome).toBeInstanceOf(StoredRunError);
          expect(leaksStored((outcome as StoredRunError).problem)).toBe(false);
        } else expect(['ok', 'illegal', 'unknown']).toContain(outcome);
        expectWarningsTyped(warnings, root);
        expectNoMarkupFromFiles(root);
        rmSync(root, { recursive: true, force: true });
      }),
      { interruptAfterTimeLimit: FUZZ_MS, numRuns: 1_000_000 },
    );
  });

  it('a history spanning 104 days renders in bounded time (one bar and one tick per second before)', () => {
    const root = freshRoot();
    const history = baseHistory('x');
    history.at(-1)!.time = 2 ** 53 - 1;
    mkdirSync(join(root, 'long'));
    writeFileSync(join(root, 'long', 'run.json'), JSON.stringify(runMeta('long')));
    writeFileSync(join(root, 'long', 'results.json'), JSON.stringify(runResults('long')));
    writeFileSync(join(root, 'long', 'history.jsonl'), history.map((e) => JSON.stringify(e)).join('\n'));
    const started = performance.now();
    expect(rebuildSite(root, () => {})).toBe(1);
    expect(performance.now() - started).toBeLessThan(PER_CASE_MS);
    expect(readFileSync(join(root, 'long', 'index.html'), 'utf8').length).toBeLessThan(1_000_000);
  });

  it('files that are not files (a FIFO, a link to /dev/zero, a directory) are skipped at once', () => {
    const root = freshRoot();
    const valid = (name: string) => {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, 'run.json'), JSON.stringify(runMeta(name)));
      writeFileSync(join(root, name, 'results.json'), JSON.stringify(runResults(name)));
      writeFileSync(join(root, name, 'history.jsonl'), '');
    };
    valid('fifo');
    rmSync(join(root, 'fifo', 'run.json'));
    execFileSync('mkfifo', [join(root, 'fifo', 'run.json')]);
    valid('zero');
    rmSync(join(root, 'zero', 'results.json'));
    symlinkSync('/dev/zero', join(root, 'zero', 'results.json'));
    valid('dir');
    rmSync(join(root, 'dir', 'run.json'));
    mkdirSync(join(root, 'dir', 'run.json'));
    valid('history-fifo');
    rmSync(join(root, 'history-fifo', 'history.jsonl'));
    execFileSync('mkfifo', [join(root, 'history-fifo', 'history.jsonl')]);
    const warnings: ReportWarning[] = [];
    const started = performance.now();
    expect(rebuildSite(root, (w) => warnings.push(w))).toBe(0);
    expect(performance.now() - started).toBeLessThan(PER_CASE_MS);
    expect(warnings.map((w) => [w.file.slice(root.length + 1), w.problem]).sort()).toEqual([
      ['dir/run.json', 'not a regular file'],
      ['fifo/run.json', 'not a regular file'],
      ['history-fifo/history.jsonl', 'not a regular file'],
      ['zero/results.json', 'not a regular file'],
    ]);
  });
});
