import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import {
  type EdnMap,
  HistoryParseError,
  loadOperations,
  parseJepsenEdn,
  readLines,
  showValue,
} from '../src/history/index.js';
import { canonicalJson } from '../src/models/index.js';
import { sharedData } from './data-dir.js';

/**
 * Issue #15: Jepsen EDN histories as Jepsen writes them. The corpus in test/data/jepsen/ was written
 * for these tests (expected.tsv: file, flags, verdict, verdict per key, and what fencekit answered
 * before #15); every row is checked through the CLI, with --json and without.
 */
const CORPUS = fileURLToPath(new URL('./data/jepsen/', import.meta.url));
const EXIT = { ok: 0, illegal: 1, unknown: 2 } as const;

interface Row {
  file: string;
  args: string[];
  verdict: 'ok' | 'illegal' | 'unknown';
  keys: Record<string, string> | undefined;
}

const rows: Row[] = readFileSync(join(CORPUS, 'expected.tsv'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'))
  .map((line) => {
    const [file, args, verdict, keys] = line.split('\t') as [string, string, Row['verdict'], string];
    return {
      file,
      args: args.split(' '),
      verdict,
      keys: keys === '-' ? undefined : Object.fromEntries(keys.split(' ').map((kv) => kv.split('='))),
    };
  });

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

/** The search's internal markers (objects, bigints, strings behind \u0000-\u0002) must never show. */
function expectNoInternalEncoding(text: string): void {
  expect([...text].some((c) => c.charCodeAt(0) <= 2)).toBe(false);
  expect(text).not.toMatch(/\\u000[0-2]|\\x0[0-2]/);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fencekit-jepsen-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the Jepsen EDN corpus (test/data/jepsen/expected.tsv)', () => {
  it('has every shape the issue names', () => {
    const files = rows.map((r) => r.file).join(' ');
    for (const shape of [
      'independent',
      '.gz',
      'tagged',
      'nil-read',
      'initial-value',
      'crashed',
      'nil-keyword',
    ])
      expect(files).toContain(shape);
    expect(rows.length).toBeGreaterThanOrEqual(15);
  });

  for (const row of rows) {
    it(`${row.file} ${row.args.join(' ')} is ${row.verdict}`, async () => {
      const path = join(CORPUS, row.file);
      const json = await run(path, ...row.args, '--json');
      expect(json.err).toBe('');
      expect(json.code).toBe(EXIT[row.verdict]);
      expectNoInternalEncoding(json.out);
      const report = JSON.parse(json.out);
      expect(report.verdict).toBe(row.verdict);
      const explicit = row.args.includes('--semantics')
        ? row.args[row.args.indexOf('--semantics') + 1]
        : 'knossos';
      expect(report.semantics.name).toBe(explicit);
      const partitions: { key: string | null; verdict: string }[] = report.checks.linearizability.partitions;
      if (row.keys === undefined) {
        expect(report.semantics.independent.applied).toBe(false);
        expect(partitions.map((p) => p.key)).toEqual([null]);
      } else {
        expect(report.semantics.independent.applied).toBe(true);
        expect(Object.fromEntries(partitions.map((p) => [p.key, p.verdict]))).toEqual(row.keys);
      }
      const human = await run(path, ...row.args);
      expect(human.code).toBe(json.code);
      expectNoInternalEncoding(human.out);
      expect(human.out.split('\n')[0]).toBe(`${path}: ${row.verdict}`);
      // One key has no per-key lines in the text report.
      const keys = Object.entries(row.keys ?? {});
      if (keys.length > 1)
        for (const [key, verdict] of keys)
          expect(human.out).toMatch(new RegExp(`^ {4}key ${key}: ${verdict}`, 'm'));
    });
  }

  it('says how it read an independent history: knossos semantics, keys, nil reads, ops left out', async () => {
    const { out } = await run(
      join(CORPUS, 'independent-cas-register-bad.edn'),
      '--model',
      'cas-register',
      '--json',
    );
    const report = JSON.parse(out);
    expect(report.semantics).toMatchObject({
      name: 'knossos',
      nilReads: 'unknown',
      nilKeyword: true,
      initialValue: null,
      independent: { mode: 'auto', applied: true, keys: 3 },
      ignored: { ops: 0 },
    });
    const bad = report.checks.linearizability.partitions.find((p: { key: string }) => p.key === '1');
    expect(bad.conviction).toBe('read 9, which no op had started writing');
    expect(bad.unplaced[0].op).toMatch(/^\d+ \[1\] read null → 9$/);
    const human = await run(join(CORPUS, 'independent-cas-register-bad.edn'), '--model', 'cas-register');
    expect(human.out).toContain('read as: knossos semantics');
    expect(human.out).toContain('jepsen.independent tuples split into 3 keys');
    expect(human.out).toMatch(/^ {4}key 1: illegal \(read 9, which no op had started writing\)$/m);
  });

  it('--independent on splits, off keeps tuples whole, and on refuses a history that has no tuples', async () => {
    const small = join(CORPUS, 'independent-small.edn');
    expect((await run(small, '--model', 'cas-register', '--independent', 'on')).code).toBe(0);
    const off = await run(small, '--model', 'cas-register', '--independent', 'off', '--json');
    expect(off.code).toBe(1);
    expect(JSON.parse(off.out).semantics.independent).toEqual({ mode: 'off', applied: false, keys: 0 });
    expectNoInternalEncoding(off.out);
    const plain = await run(join(CORPUS, 'crashed-write.edn'), '--model', 'register', '--independent', 'on');
    expect(plain.code).toBe(3);
    expect(plain.err).toMatch(/--independent on: write 1 is no \[key value\] tuple/);
  });

  it("checks knossos' multi-register history from {:x 0, :y 0}, as its authors did (the CLI could only start from nil: illegal)", async () => {
    const file = `${sharedData()}knossos/multi-register/good/multi-register.edn`;
    const from = await run(file, '--model', 'multi-register', '--initial-value', '{:x 0, :y 0}', '--json');
    expect(from.code).toBe(0);
    expect(JSON.parse(from.out).semantics.initialValue).toBe('{:x 0, :y 0}');
    expect((await run(file, '--model', 'multi-register')).code).toBe(1);
  });

  it('refuses a cas under --model register naming the op (it was left out: a swapped value went unseen)', async () => {
    const history = [
      '[{:type :invoke, :f :write, :value 1, :process 0, :index 0}',
      ' {:type :ok, :f :write, :value 1, :process 0, :index 1}',
      ' {:type :invoke, :f :cas, :value [1 2], :process 1, :index 2}',
      ' {:type :ok, :f :cas, :value [1 2], :process 1, :index 3}',
      ' {:type :invoke, :f :read, :value nil, :process 2, :index 4}',
      ' {:type :ok, :f :read, :value 1, :process 2, :index 5}]',
    ].join('\n');
    const path = join(dir, 'cas-under-register.edn');
    await writeFile(path, history);
    const r = await run(path, '--model', 'register');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/op 1: .*register model has no cas \(cas \[1,2\] by process 1\)/);
    expect((await run(path, '--model', 'cas-register')).code).toBe(1);
  });

  it('leaves out ops of an f the model has no operation for, and says which', async () => {
    const { code, out } = await run(join(CORPUS, 'tagged-literals.edn'), '--model', 'register', '--json');
    expect(code).toBe(0);
    expect(JSON.parse(out).semantics.ignored).toEqual({ ops: 1, byF: { health: 1 } });
  });

  it('refuses --initial-value where the model has none, or text that is no EDN value', async () => {
    const file = join(CORPUS, 'crashed-write.edn');
    const mutex = await run(file, '--model', 'mutex', '--initial-value', '0');
    expect(mutex.code).toBe(3);
    expect(mutex.err).toMatch(/the mutex model has no initial value/);
    expect((await run(file, '--model', 'register', '--initial-value', '[1')).code).toBe(3);
    expect((await run(file, '--model', 'register', '--initial-value', '1 2')).code).toBe(3);
    const multi = await run(file, '--model', 'multi-register', '--initial-value', '7');
    expect(multi.code).toBe(3);
    expect(multi.err).toMatch(/a map of registers/);
    // nil, null and :nil all mean nil.
    for (const initial of ['nil', 'null', ':nil']) {
      const { out } = await run(file, '--model', 'register', '--initial-value', initial, '--json');
      expect(JSON.parse(out).semantics.initialValue).toBeNull();
    }
  });
});

describe('gzipped histories', () => {
  const register = [
    '{"index":0,"time":10,"process":0,"type":"invoke","f":"write","value":1}',
    '{"index":1,"time":20,"process":0,"type":"ok","f":"write","value":1}',
    '{"index":2,"time":30,"process":1,"type":"invoke","f":"read","value":null}',
    '{"index":3,"time":40,"process":1,"type":"ok","f":"read","value":1}',
  ].join('\n');

  it('reads .jsonl.gz and .edn.gz, and gzip whatever the file is called', async () => {
    const jsonl = join(dir, 'history.jsonl.gz');
    await writeFile(jsonl, gzipSync(register));
    const r = await run(jsonl, '--model', 'register', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).format).toBe('jsonl');
    expect(JSON.parse(r.out).semantics.name).toBe('strict');
    const disguised = join(dir, 'gzipped.edn');
    await writeFile(disguised, gzipSync(readFileSync(join(CORPUS, 'independent-small.edn'))));
    expect((await run(disguised, '--model', 'cas-register')).code).toBe(0);
    // Two gzip members one after the other (as `cat a.gz b.gz` makes) are one history.
    const lines = register.split('\n');
    const members = join(dir, 'members.jsonl.gz');
    await writeFile(
      members,
      Buffer.concat([gzipSync(`${lines.slice(0, 2).join('\n')}\n`), gzipSync(lines.slice(2).join('\n'))]),
    );
    expect((await loadOperations(members)).map((op) => op.output)).toEqual([1, 1]);
  });

  it('refuses a repeated :index naming both lines, as JSONL does (one was accepted, file order deciding)', async () => {
    // A write completes at :index 1, a later read is invoked at :index 1 too and misses it.
    const history = [
      '[{:type :invoke, :f :write, :value 1, :process 0, :index 0}',
      ' {:type :ok, :f :write, :value 1, :process 0, :index 1}',
      ' {:type :invoke, :f :read, :value nil, :process 1, :index 1}',
      ' {:type :ok, :f :read, :value 0, :process 1, :index 2}]',
    ].join('\n');
    const dup = join(dir, 'dup-index.edn');
    await writeFile(dup, history);
    const r = await run(dup, '--model', 'register', '--initial-value', '0');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(
      /dup-index\.edn:3: expected an :index of its own \(1 is already the index of line 2\)/,
    );
    expect(() => parseJepsenEdn(history, 'd.edn')).toThrow(/d\.edn:3: .*already the index of line 2/);
    // One history written twice (op maps one after another, as a streamed history.edn), as two gzip
    // members of one file: every :index twice.
    const ops = [
      '{:type :invoke, :f :write, :value 1, :process 0, :index 0}',
      '{:type :ok, :f :write, :value 1, :process 0, :index 1}',
      '{:type :invoke, :f :read, :value nil, :process 1, :index 2}',
      '{:type :ok, :f :read, :value 1, :process 1, :index 3}',
      '',
    ].join('\n');
    const twice = join(dir, 'twice.edn.gz');
    await writeFile(twice, Buffer.concat([gzipSync(ops), gzipSync(ops)]));
    await writeFile(join(dir, 'once.edn.gz'), gzipSync(ops));
    expect((await run(join(dir, 'once.edn.gz'), '--model', 'register')).code).toBe(0);
    const t = await run(twice, '--model', 'cas-register');
    expect(t.code).toBe(3);
    expect(t.err).toMatch(
      /twice\.edn\.gz:5: expected an :index of its own \(0 is already the index of line 1\)/,
    );
    // Events without :index are numbered by position and never clash.
    expect(
      parseJepsenEdn('{:process 0, :type :invoke, :f :read}\n{:process 0, :type :ok, :f :read}'),
    ).toHaveLength(2);
  });

  it('refuses a gzip bomb with a typed error naming the file, before inflating it all', async () => {
    // 16 MiB of newlines in about 16 KiB: a ratio of 1000 to 1.
    const bomb = gzipSync(Buffer.alloc(16 * 2 ** 20, 10), { level: 9 });
    expect(bomb.length).toBeLessThan(2 ** 15);
    const path = join(dir, 'bomb.edn.gz');
    await writeFile(path, bomb);
    const r = await run(path, '--model', 'register', '--max-decompressed', '1MiB');
    expect(r.code).toBe(3);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/bomb\.edn\.gz:\d+: expected at most 1048576 bytes once decompressed/);
    const reading = async () => {
      for await (const _ of readLines(Readable.from([bomb]), 'bomb', { maxDecompressedBytes: 2 ** 20 }));
    };
    await expect(reading()).rejects.toThrow(HistoryParseError);
    // Under the cap such a file reads (and holds no events: exit 3 for that, not for its size).
    const small = join(dir, 'newlines.edn.gz');
    await writeFile(small, gzipSync(Buffer.alloc(2 ** 19, 10)));
    const fits = await run(small, '--model', 'register', '--max-decompressed', '1MiB');
    expect(fits.code).toBe(3);
    expect(fits.err).toMatch(/holds no events/);
  });

  it('answers a corrupt or cut gzip stream with exit 3 naming the file', async () => {
    const whole = gzipSync(register);
    const cut = join(dir, 'cut.jsonl.gz');
    await writeFile(cut, whole.subarray(0, whole.length - 12));
    const r = await run(cut, '--model', 'register');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cut\.jsonl\.gz:\d+: expected gzip data that inflates, found "corrupt gzip/);
    const garbage = join(dir, 'garbage.edn.gz');
    await writeFile(garbage, Buffer.from([0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    const g = await run(garbage, '--model', 'register');
    expect(g.code).toBe(3);
    expect(g.err).toMatch(/garbage\.edn\.gz:\d+: expected gzip data that inflates, found "corrupt gzip/);
    // Bad input (a parse error naming the file), as a history that is not UTF-8 is, not a failed read.
    await expect(loadOperations(garbage)).rejects.toThrow(HistoryParseError);
  });
});

describe('EDN as Jepsen and Clojure write it', () => {
  const op = (value: string, extra = '') => `{:process 0, :type :invoke, :f :write, :value ${value}${extra}}`;
  const value = (text: string, options = {}) =>
    parseJepsenEdn(op(text), 'v.edn', undefined, options)[0]?.value;
  const show = (text: string, options = {}) => showValue(value(text, options));

  it('reads a string key and a keyword key as different keys ({":a" 1} was {:a 1})', () => {
    expect(show('{":a" 1}')).toBe('{":a" 1}');
    expect(show('{:a 1}')).toBe('{:a 1}');
    expect(canonicalJson(value('{":a" 1}'))).not.toBe(canonicalJson(value('{:a 1}')));
    // Both in one map: neither is lost.
    expect(show('{"a" 1, :a 2}')).toBe('{"a" 1, :a 2}');
    expect((value('{"a" 1, :a 2}') as EdnMap).get('a')).toBe(2);
    // An op map with string keys is no op map.
    expect(() => parseJepsenEdn('{":process" 0, ":type" ":invoke", ":f" ":read"}', 's.edn')).toThrow(
      /s\.edn:1: expected :process as an integer or keyword, found "nothing"/,
    );
  });

  it('reads tagged literals, records, $ symbols, characters, hex, ##Inf and #_ discards', () => {
    expect(show('#inst "2026-12-03T10:00:00.000-00:00"')).toBe('#inst "2026-12-03T10:00:00.000-00:00"');
    expect(show('#uuid "6fa459ea-ee8a-3ca4-894e-db77e160355e"')).toBe(
      '#uuid "6fa459ea-ee8a-3ca4-894e-db77e160355e"',
    );
    expect(show('#object[java.lang.Thread 0x1f "main"]')).toBe('#object [java.lang.Thread 31 "main"]');
    expect(show('#jepsen.nemesis.Partition{:grudge {:n1 #{:n2}}}')).toBe(
      '#jepsen.nemesis.Partition {:grudge {:n1 #{:n2}}}',
    );
    expect(show('[clojure.core$fn__8072 jepsen.client$invoke_BANG_ a&b %]')).toBe(
      '[clojure.core$fn__8072 jepsen.client$invoke_BANG_ a&b %]',
    );
    expect(show('[\\a \\newline \\space \\u00e9 \\, \\(]')).toBe(
      '[\\a \\newline \\space \\u00e9 \\u002c \\u0028]',
    );
    expect(value('"caf\\u00e9 \\b\\f"')).toBe('café \b\f');
    expect(() => value('"\\u00"')).toThrow(/expected a string escape/);
    expect(show('[0xff -0x10 ##Inf ##-Inf 1/4 4/2 1.0 1.50M 2N]')).toBe(
      '[255 -16 ##Inf ##-Inf 1/4 2 1.0 1.5M 2]',
    );
    expect(show('##NaN')).toBe('##NaN');
    expect(value('[1 #_ 2 #_ #_ 3 4 5]')).toEqual([1, 5]);
    expect(show('{:a 1 #_ :b}')).toBe('{:a 1}');
    // Top level: a record op, a discarded op, a tag on the line before its op.
    const events = parseJepsenEdn(
      `#jepsen.history.Op{:process 0, :type :invoke, :f :read, :value nil}\n#_ ${op('9')}\n#jepsen.history.Op\n{:process 0, :type :ok, :f :read, :value 1}\n`,
    );
    expect(events.map((e) => [e.type, e.value])).toEqual([
      ['invoke', null],
      ['ok', 1],
    ]);
  });

  it('reads :nil as nil under knossos semantics (the default), as a keyword otherwise', () => {
    expect(value(':nil')).toBeNull();
    expect(value('[1 :nil]')).toEqual([1, null]);
    expect(show(':nil', { nilKeyword: false })).toBe(':nil');
  });

  it('refuses what is no EDN with typed errors naming the line', () => {
    for (const [text, message] of [
      ['#1x 2', /expected a tag \(a symbol\) after #/],
      ['#inst', /bad\.edn:2: expected a value, found "}"/],
      ['##Pi', /expected ##Inf, ##-Inf or ##NaN/],
      ['\\abc', /expected a character/],
      [`${'#t '.repeat(200)}1`, /expected collections nested at most 100 deep/],
    ] as const) {
      expect(() => parseJepsenEdn(`[${op('1')}\n${op(text)}]`, 'bad.edn')).toThrow(HistoryParseError);
      expect(() => parseJepsenEdn(`[${op('1')}\n${op(text)}]`, 'bad.edn')).toThrow(message);
    }
  });
});

describe("values compare as Clojure's = compares them (EDN), as JSON's types do (JSONL)", () => {
  const jsonl = (write: string, read: string) =>
    [
      `{"index":0,"time":0,"process":0,"type":"invoke","f":"write","value":${write}}`,
      `{"index":1,"time":1,"process":0,"type":"ok","f":"write","value":${write}}`,
      '{"index":2,"time":2,"process":1,"type":"invoke","f":"read","value":null}',
      `{"index":3,"time":3,"process":1,"type":"ok","f":"read","value":${read}}`,
    ].join('\n');

  it('keeps JSONL in JSON types: a string stays a string, 1.0 is 1, and --initial-value :a is "a"', async () => {
    const cases: [string, string, number][] = [
      ['"a"', '"a"', 0],
      ['1', '1.0', 0],
      ['{"a":1,"b":[1,2]}', '{"b":[1,2],"a":1}', 0],
      ['"a"', '":a"', 1],
      ['1', '"1"', 1],
    ];
    for (const [i, [write, read, code]] of cases.entries()) {
      const file = join(dir, `json-${i}.jsonl`);
      await writeFile(file, jsonl(write, read));
      expect((await run(file, '--model', 'register')).code, `${write} then ${read}`).toBe(code);
    }
    const file = join(dir, 'json-initial.jsonl');
    await writeFile(file, jsonl('"b"', '"b"').split('\n').slice(2).join('\n').replace('"b"', '"a"'));
    expect((await run(file, '--model', 'register', '--initial-value', ':a')).code).toBe(0);
    expect((await run(file, '--model', 'register', '--initial-value', '"a"')).code).toBe(0);
  });

  it('refuses a history whose :key fields name two keys alike (1 and "1", :a and ":a"), not merging them', async () => {
    // Review 15b F5: the kv model split by the key's text, so :key 1 and :key "1" were one key (illegal
    // where knossos sees two). Until the report can name both, such a history is bad input naming both.
    const int = await run(join(CORPUS, 'kv-key-int-vs-string.edn'), '--model', 'kv');
    expect(int.code).toBe(3);
    expect(int.err).toMatch(
      /kv-key-int-vs-string\.edn:3: .*:key 1 and, on line 1, :key \\?"1\\?", both named 1/,
    );
    const kw = await run(join(CORPUS, 'kv-key-kw-vs-string.edn'), '--model', 'kv');
    expect(kw.code).toBe(3);
    expect(kw.err).toMatch(/:key :a and, on line 1, :key \\?":a\\?", both named :a/);
    // One key spelled alike on every op is fine.
    const same = join(dir, 'kv-same-key.edn');
    await writeFile(
      same,
      [
        '[{:process 0, :type :invoke, :f :put, :key 1, :value "x"}',
        ' {:process 0, :type :ok, :f :put, :key 1, :value "x"}',
        ' {:process 1, :type :invoke, :f :get, :key 1, :value nil}',
        ' {:process 1, :type :ok, :f :get, :key 1, :value "x"}]',
      ].join('\n'),
    );
    expect((await run(same, '--model', 'kv')).code).toBe(0);
  });

  it('keeps one set member one member whatever its text holds (a keyword with U+0001 is not two keywords)', async () => {
    // Review 15b F2: the set state joined members with U+0001, which a keyword's name may hold, so
    // adding :a<U+0001>:b read back as #{:a :b}. Knossos: illegal. (Not a corpus row: the keyword's
    // own U+0001 shows in the messages, which the rows check for internal markers.)
    const file = join(CORPUS, 'set-ctrl-keyword-sep.edn');
    expect(readFileSync(file, 'utf8')).toContain(':a\u0001:b');
    const { code, out } = await run(file, '--model', 'set', '--json');
    expect(code).toBe(1);
    expect(JSON.parse(out).verdict).toBe('illegal');
    // Two ops of the same keyword stay one member.
    const twice = join(dir, 'set-ctrl-twice.edn');
    await writeFile(
      twice,
      [
        '[{:process 0, :type :invoke, :f :add, :value :a\u0001:b}',
        ' {:process 0, :type :ok, :f :add, :value :a\u0001:b}',
        ' {:process 1, :type :invoke, :f :add, :value :a\u0001:b}',
        ' {:process 1, :type :ok, :f :add, :value :a\u0001:b}',
        ' {:process 2, :type :invoke, :f :read, :value nil}',
        ' {:process 2, :type :ok, :f :read, :value #{:a\u0001:b}}]',
      ].join('\n'),
    );
    expect((await run(twice, '--model', 'set')).code).toBe(0);
  });

  it('reads a JSONL set read as an array (JSON has no sets), an EDN vector read as no set', async () => {
    const path = join(dir, 'set-array.jsonl');
    const line = (index: number, process: number, type: string, f: string, value: unknown) =>
      JSON.stringify({ index, time: index, process, type, f, value });
    await writeFile(
      path,
      [
        line(0, 0, 'invoke', 'add', 1),
        line(1, 0, 'ok', 'add', 1),
        line(2, 1, 'invoke', 'read', null),
        line(3, 1, 'ok', 'read', [1]),
      ].join('\n'),
    );
    expect((await run(path, '--model', 'set')).code).toBe(0);
    const vector = await run(join(CORPUS, 'set-vector-read.edn'), '--model', 'set', '--json');
    expect(JSON.parse(vector.out).checks.linearizability.partitions[0].unplaced[0].reason).toMatch(/no set/);
  });

  it('reads EDN sets in the set model and EDN maps in the fenced-register model, types kept', async () => {
    const edn = (name: string, ops: string[]) => {
      const file = join(dir, name);
      return writeFile(file, ops.map((o, i) => `{${o}, :index ${i}}`).join('\n')).then(() => file);
    };
    const set = (read: string) =>
      edn(`set-${read.length}-${read.charCodeAt(3)}.edn`, [
        ':type :invoke, :f :add, :value :a, :process 0',
        ':type :ok, :f :add, :value :a, :process 0',
        ':type :invoke, :f :add, :value 1, :process 0',
        ':type :ok, :f :add, :value 1, :process 0',
        ':type :invoke, :f :read, :value nil, :process 1',
        `:type :ok, :f :read, :value ${read}, :process 1`,
      ]);
    expect((await run(await set('#{1 :a}'), '--model', 'set')).code).toBe(0);
    expect((await run(await set('#{1 "a"}'), '--model', 'set')).code).toBe(1);
    const fenced = (read: string) =>
      edn(`fenced-${read}.edn`, [
        ':type :invoke, :f :write, :value {:value :x, :fence 2}, :process 0',
        ':type :ok, :f :write, :value {:value :x, :fence 2}, :process 0',
        ':type :invoke, :f :read, :value nil, :process 1',
        `:type :ok, :f :read, :value ${read}, :process 1`,
      ]);
    expect((await run(await fenced(':x'), '--model', 'fenced-register')).code).toBe(0);
    expect((await run(await fenced('"x"'), '--model', 'fenced-register')).code).toBe(1);
  });

  it('shows EDN values as EDN in messages, a keyword apart from a string', async () => {
    const human = await run(join(CORPUS, 'kw-vs-string-value.edn'), '--model', 'cas-register');
    expect(human.out).toContain('read "a", which no op had started writing');
    const keys = await run(join(CORPUS, 'kw-vs-string-key.edn'), '--model', 'cas-register');
    expect(keys.out).toMatch(/^ {4}key a: illegal \(read 1, which no op had started writing\)$/m);
    expect(keys.out).toMatch(/^ {4}key :a: ok$/m);
    expect(
      showValue(
        parseJepsenEdn(`{:process 0, :type :ok, :f :read, :value [:a "a" \\a a 1.0 1/2 #{1} nil]}`)[0]?.value,
      ),
    ).toBe('[:a "a" \\a a 1.0 1/2 #{1} nil]');
  });
});

describe('EDN prefixes stay bounded', () => {
  it('refuses 100 000 nested discards or tags with a typed error, not a stack overflow', () => {
    for (const prefix of ['#_ ', '#t ']) {
      const text = `{:process 0, :type :invoke, :f :write, :value ${prefix.repeat(100_000)}1 2}`;
      expect(() => parseJepsenEdn(text, 'deep.edn')).toThrow(
        /deep\.edn:1: expected (discards|collections) nested at most 100 deep/,
      );
    }
  });
});
