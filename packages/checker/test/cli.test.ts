import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { formatHistoryEvent } from '../src/history/index.js';
import { HistoryBuilder } from './lock-history.js';

const DATA = '/work/shared/data';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fencekit-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

async function writeHistory(name: string, h: HistoryBuilder): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `${h.events.map(formatHistoryEvent).join('\n')}\n`);
  return path;
}

/** Two buyers inside the lock at once, the second with a newer fence; a third buys cleanly. */
function overlappingInventory(): HistoryBuilder {
  return new HistoryBuilder()
    .resource(0, 'init', { stock: 2 })
    .client(1, 1, 'invoke', 'buy')
    .client(1, 2, 'invoke', 'buy')
    .resource(2, 'enter', { client: 1, fence: '1', accepted: true })
    .resource(3, 'enter', { client: 2, fence: '2', accepted: true })
    .resource(4, 'read', { client: 1, stock: 2 })
    .resource(5, 'read', { client: 2, stock: 2 })
    .resource(6, 'write', { client: 2, stock: 1, fence: '2', accepted: true })
    .resource(7, 'write', { client: 1, stock: 1, fence: '1', accepted: true })
    .resource(8, 'leave', { client: 1 })
    .resource(9, 'leave', { client: 2 })
    .client(10, 1, 'ok', 'buy')
    .client(10, 2, 'ok', 'buy');
}

describe('fencekit-check linearizability', () => {
  it('exits 1 for an illegal porcupine log and 0 for a linearizable one', async () => {
    const bad = await run(`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'cas-register');
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/etcd_000\.log: illegal/);
    const good = await run(`${DATA}/porcupine/jepsen/etcd_101.log`, '--model', 'cas-register');
    expect(good).toMatchObject({ code: 0, err: '' });
  });

  it('prints every partition (key) verdict with --json', async () => {
    const { code, out } = await run(`${DATA}/porcupine/kv/c10-bad.txt`, '--model', 'kv', '--json');
    const json = JSON.parse(out);
    expect(code).toBe(1);
    expect(json.verdict).toBe('illegal');
    const partitions = json.checks.linearizability.partitions as { key: string; verdict: string }[];
    expect(partitions.length).toBeGreaterThan(1);
    expect(new Set(partitions.map((p) => p.key)).size).toBe(partitions.length);
    expect(partitions.some((p) => p.verdict === 'illegal')).toBe(true);
    expect(partitions.every((p) => ['ok', 'illegal', 'unknown'].includes(p.verdict))).toBe(true);
  });

  it('answers unknown, never illegal, when the memory budget runs out on a linearizable history', async () => {
    const { code, out } = await run(
      `${DATA}/porcupine/kv/c50-ok.txt`,
      '--model',
      'kv',
      '--memory',
      '1KiB',
      '--json',
    );
    const partitions = JSON.parse(out).checks.linearizability.partitions as {
      verdict: string;
      reason?: string;
    }[];
    expect([0, 2]).toContain(code);
    expect(partitions.some((p) => p.verdict === 'illegal')).toBe(false);
    for (const p of partitions.filter((p) => p.verdict === 'unknown')) expect(p.reason).toBe('memory');
  });

  it('reads Jepsen EDN and writes the HTML report', async () => {
    const html = join(dir, 'mutex.html');
    const { code } = await run(`${DATA}/knossos/mutex/bad/etcd.edn`, '--model', 'mutex', '--html', html);
    expect(code).toBe(1);
    const page = await readFile(html, 'utf8');
    expect(page).toContain('<body data-verdict="illegal">');
    expect(page).toContain('class="op ok linearized"');
    expect(page).toMatch(/class="op [a-z]+ unplaced/);
  });
});

describe('fencekit-check lock checkers', () => {
  it('convicts overlapping holders, a stale write and a lost update, with JSON details', async () => {
    const file = await writeHistory('inventory.jsonl', overlappingInventory());
    const { code, out } = await run(file, '--checker', 'mutex,fence,inventory', '--json');
    expect(code).toBe(1);
    const json = JSON.parse(out);
    expect(json.checks.mutex).toMatchObject({
      verdict: 'illegal',
      violationCount: 1,
      resources: { '': 'illegal' },
    });
    expect(json.checks.mutex.violations[0]).toMatchObject({
      first: { client: 1, fence: '1' },
      second: { client: 2, fence: '2' },
    });
    expect(json.checks.fence.violations[0]).toMatchObject({ kind: 'stale-accepted', client: 1 });
    expect(json.checks.inventory.violations.map((v: { kind: string }) => v.kind)).toContain('lost-update');
  });

  it('judges semaphore and read-write lock histories by name and under all (#19)', async () => {
    const pool = new HistoryBuilder()
      .resource(0, 'sem-enter', { client: 1, permits: 1, limit: 1 })
      .resource(5, 'sem-enter', { client: 2, permits: 1, limit: 1 })
      .resource(9, 'sem-leave', { client: 1 })
      .resource(10, 'sem-leave', { client: 2 });
    const over = await writeHistory('semaphore-over.jsonl', pool);
    const named = await run(over, '--checker', 'semaphore', '--json');
    expect(named.code).toBe(1);
    expect(JSON.parse(named.out).checks.semaphore.violations[0]).toMatchObject({
      kind: 'over-capacity',
      peak: 2,
    });
    expect((await run(over, '--checker', 'all')).code).toBe(1);
    const register = new HistoryBuilder()
      .resource(0, 'rw-enter', { client: 1, mode: 'read', fence: '1', accepted: true })
      .resource(1, 'rw-enter', { client: 2, mode: 'read', fence: '2', accepted: true })
      .resource(2, 'rw-leave', { client: 1 })
      .resource(3, 'rw-leave', { client: 2 })
      .resource(4, 'rw-enter', { client: 3, mode: 'write', fence: '3', accepted: true })
      .resource(5, 'rw-leave', { client: 3 });
    const clean = await run(await writeHistory('rwlock-clean.jsonl', register), '--checker', 'all');
    expect(clean.code, clean.out).toBe(0);
    expect(clean.out).toMatch(/rwlock: ok/);
    expect(clean.out).toMatch(
      /semaphore: unknown \(nothing to check: no resource "sem-enter" lines; not counted/,
    );
    const noMode = new HistoryBuilder().resource(0, 'rw-enter', { client: 1, fence: '1' });
    expect((await run(await writeHistory('rwlock-no-mode.jsonl', noMode), '--checker', 'rwlock')).code).toBe(
      3,
    );
  });

  it('exits 0 for a clean history with --checker all', async () => {
    const h = new HistoryBuilder()
      .resource(0, 'init', { stock: 1 })
      .client(1, 1, 'invoke', 'buy')
      .resource(2, 'enter', { client: 1, fence: '1', accepted: true })
      .resource(3, 'read', { client: 1, stock: 1 })
      .resource(4, 'write', { client: 1, stock: 0, fence: '1', accepted: true })
      .resource(5, 'claim', { client: 1, term: '1', fence: '1', accepted: true })
      .resource(6, 'run', { client: 1, tick: 1, fence: '1' })
      .resource(7, 'leave', { client: 1 })
      .client(8, 1, 'ok', 'buy');
    const file = await writeHistory('clean.jsonl', h);
    const all = await run(file, '--checker', 'all');
    expect(all.code).toBe(0);
    expect(all.out.match(/: ok/g)).toHaveLength(6);
  });

  it('gives a verdict per protected resource (key) with --json', async () => {
    const h = new HistoryBuilder()
      .section(1, 1, 10, 30, 'a')
      .section(2, 2, 20, 40, 'a')
      .section(3, 3, 10, 40, 'b');
    const { code, out } = await run(await writeHistory('keys.jsonl', h), '--checker', 'mutex', '--json');
    expect(code).toBe(1);
    expect(JSON.parse(out).checks.mutex.resources).toEqual({ a: 'illegal', b: 'ok' });
  });

  it('combines a model and lock checks on one harness history, in one HTML report', async () => {
    const h = new HistoryBuilder()
      .client(1, 1, 'invoke', 'write', 1)
      .resource(2, 'enter', { client: 1, fence: '1', accepted: true })
      .resource(3, 'leave', { client: 1 })
      .client(4, 1, 'ok', 'write', 1)
      .client(5, 2, 'invoke', 'read', null)
      .resource(6, 'enter', { client: 2, fence: '2', accepted: true })
      .resource(7, 'leave', { client: 2 })
      .client(8, 2, 'ok', 'read', 2);
    const html = join(dir, 'combined.html');
    const { code, out } = await run(
      await writeHistory('combined.jsonl', h),
      '--model',
      'register',
      '--checker',
      'mutex',
      '--html',
      html,
    );
    // The read of 2 was never written: not linearizable; the critical sections never overlapped.
    expect(code).toBe(1);
    expect(out).toMatch(/linearizability: illegal/);
    expect(out).toMatch(/mutex: ok/);
    const page = await readFile(html, 'utf8');
    expect(page).toContain('data-lanes="2"');
    expect(page).toMatch(/<section class="partition"[^>]*data-verdict="illegal"/);
  });

  it('exits 2 when a check cannot decide (no fences to judge)', async () => {
    const file = await writeHistory(
      'unfenced.jsonl',
      new HistoryBuilder()
        .resource(1, 'enter', { client: 1, accepted: true })
        .resource(2, 'leave', { client: 1 }),
    );
    const { code, out } = await run(file, '--checker', 'fence');
    expect(code).toBe(2);
    expect(out).toMatch(/no fenced resource events/);
  });
});

describe('fencekit-check usage errors (exit 64, never 1)', () => {
  it.each([
    [[`${DATA}/porcupine/jepsen/etcd_000.log`], /--model <model> and\/or --checker/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'btree'], /Allowed choices are/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'register', '--timeout', 'soon'], /duration/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'register', '--timeout', '0s'], /above zero/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--checker', 'paxos'], /"paxos" is not one of/],
    [
      [`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'register', '--memory', 'lots'],
      /size such as 512MiB|not a size/,
    ],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'register', '--bogus'], /unknown option '--bogus'/],
    [['--model', 'register'], /missing required argument 'history'/],
  ])('exits 64 for %j', async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(code).toBe(64);
    expect(err).toMatch(message);
  });

  it('prints its version with --version and exits 0', async () => {
    const { code, out } = await run('--version');
    expect(code).toBe(0);
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('fencekit-check bad input', () => {
  it.each([
    [['nope.jsonl', '--checker', 'mutex'], /cannot read nope\.jsonl/],
    [[`${DATA}/knossos/mutex/bad/etcd.edn`, '--checker', 'mutex'], /read harness histories \(jsonl\)/],
    [
      [
        `${DATA}/porcupine/jepsen/etcd_101.log`,
        '--model',
        'cas-register',
        '--html',
        '/nonexistent/dir/r.html',
      ],
      /cannot write the HTML report/,
    ],
  ])('exits 3 for %j', async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(code).toBe(3);
    expect(err).toMatch(message);
  });

  it('names the file and line of a malformed history line, and the event of a malformed resource line', async () => {
    const broken = join(dir, 'broken.jsonl');
    await writeFile(
      broken,
      '{"index":0,"time":1,"process":1,"type":"invoke","f":"buy","value":null}\n{"index":1,\n',
    );
    const parse = await run(broken, '--checker', 'mutex');
    expect(parse.code).toBe(3);
    expect(parse.err).toContain(`${broken}:2: expected one JSON object per line`);
    const noClient = await writeHistory(
      'noclient.jsonl',
      new HistoryBuilder().resource(1, 'enter', { accepted: true }),
    );
    const shape = await run(noClient, '--checker', 'mutex');
    expect(shape.code).toBe(3);
    expect(shape.err).toMatch(/Event 0: expected "value.client"/);
    // The event is named by the file and line it came from too.
    expect(shape.err).toContain(`${noClient}:1: Event 0`);
  });
});

describe('fencekit-check on hostile input (issue #14)', () => {
  const event = (
    index: number,
    process: number | string,
    type: string,
    f: string,
    value: unknown,
    extra = {},
  ) => JSON.stringify({ index, time: index * 10, process, type, f, value, ...extra });

  it('refuses an empty history as bad input in every format, for models and lock checkers', async () => {
    for (const [name, text] of [
      ['empty.jsonl', ''],
      ['blank.jsonl', '\n  \n'],
      ['empty.edn', '[]'],
      ['comment.edn', '; nothing\n'],
      ['empty.log', '\n'],
    ]) {
      const path = join(dir, name as string);
      await writeFile(path, text as string);
      const lin = await run(path, '--model', 'register');
      expect(lin, name).toMatchObject({ code: 3, out: '' });
      expect(lin.err).toContain('holds no events: nothing to check');
    }
    const all = await run(join(dir, 'empty.jsonl'), '--checker', 'all');
    expect(all).toMatchObject({ code: 3, out: '' });
  });

  it('answers unknown, never ok, when nothing in the history can be judged', async () => {
    const resourceOnly = join(dir, 'resource-only.jsonl');
    await writeFile(
      resourceOnly,
      `${event(0, 'resource', 'ok', 'enter', { client: 1, fence: '1', accepted: true })}\n`,
    );
    const lin = await run(resourceOnly, '--model', 'register');
    expect(lin.code).toBe(2);
    expect(lin.out).toMatch(
      /linearizability: unknown \(nothing to check: the history has no completed client operation/,
    );
    const clientsOnly = join(dir, 'clients-only.jsonl');
    await writeFile(
      clientsOnly,
      `${event(0, 1, 'invoke', 'buy', null)}\n${event(1, 1, 'ok', 'buy', null)}\n`,
    );
    for (const checker of ['all', 'mutex', 'mutex,all', 'inventory,fence']) {
      const lock = await run(clientsOnly, '--checker', checker, '--json');
      expect(lock.code, checker).toBe(2);
      expect(JSON.parse(lock.out).verdict).toBe('unknown');
    }
    // `all` runs every lock checker but counts only those that found something to judge; one named counts.
    const mutexOnly = await writeHistory(
      'mutex-only.jsonl',
      new HistoryBuilder().section(1, 1, 10, 20).section(2, 2, 30, 40),
    );
    const all = await run(mutexOnly, '--checker', 'all');
    expect(all.code).toBe(0);
    expect(all.out).toMatch(/election: unknown \(nothing to check: no resource "claim" lines; not counted/);
    expect((await run(mutexOnly, '--checker', 'all,election')).code).toBe(2);
    const overlap = await writeHistory(
      'mutex-overlap.jsonl',
      new HistoryBuilder().section(1, 1, 10, 30).section(2, 2, 20, 40),
    );
    expect((await run(overlap, '--checker', 'all')).code).toBe(1);
    const failedOnly = join(dir, 'failed-only.edn');
    await writeFile(
      failedOnly,
      '[{:process 0 :type :invoke :f :write :value 1}\n{:process 0 :type :fail :f :write :value 1}]',
    );
    expect((await run(failedOnly, '--model', 'register')).code).toBe(2);
  });

  it('pairs client lines by index whatever the file order: buy lines out of order are judged, and a mutex overlap beside them stays illegal under all (#20; was exit 3)', async () => {
    const h = new HistoryBuilder()
      .resource(0, 'init', { stock: 5 })
      .section(1, 1, 10, 30)
      .section(2, 2, 20, 40)
      .client(50, 1, 'invoke', 'buy')
      .resource(55, 'write', { client: 1, fence: '3', stock: 4, accepted: true })
      .client(60, 1, 'ok', 'buy');
    // The buy's completion line before its invoke line, indices unchanged (README: any file order).
    const lines = h.events.map(formatHistoryEvent);
    const invoke = h.events.findIndex((e) => e.f === 'buy' && e.type === 'invoke');
    const [moved] = lines.splice(invoke, 1);
    lines.push(moved!);
    const path = join(dir, 'buy-out-of-order.jsonl');
    await writeFile(path, `${lines.join('\n')}\n`);
    const all = await run(path, '--checker', 'all', '--json');
    expect(all.code, all.err).toBe(1);
    const results = JSON.parse(all.out).checks;
    expect(results.mutex.verdict).toBe('illegal');
    expect(results.inventory.verdict).toBe('ok');
    // Every line in index order gives the same verdicts.
    const ordered = await writeHistory('buy-in-order.jsonl', h);
    const same = await run(ordered, '--checker', 'all', '--json');
    expect(same.code).toBe(1);
    expect(JSON.parse(same.out).checks.inventory).toEqual(results.inventory);
    // A completion before its invoke by index is still malformed, named by its line.
    const broken = new HistoryBuilder().client(1, 1, 'ok', 'buy').client(2, 1, 'invoke', 'buy');
    const bad = await run(await writeHistory('completion-first.jsonl', broken), '--checker', 'all');
    expect(bad.code).toBe(3);
    expect(bad.err).toMatch(/completion-first\.jsonl:1: expected an open invoke by process 1/);
  });

  it('keeps cron ticks past 2^53 written as JSON numbers exact from file to verdict: two ticks, no duplicate (#20)', async () => {
    const run1 = (index: number, tick: string, client: number) =>
      `{"index":${index},"time":${index * 10},"process":"resource","type":"ok","f":"run","value":{"client":${client},"tick":${tick},"fence":"${index + 1}","accepted":true}}`;
    const path = join(dir, 'big-ticks.jsonl');
    await writeFile(path, `${run1(0, '9007199254740993', 1)}\n${run1(1, '9007199254740992', 2)}\n`);
    const distinct = await run(path, '--checker', 'cron', '--json');
    expect(distinct.code, distinct.out + distinct.err).toBe(0);
    expect(JSON.parse(distinct.out).checks.cron.verdict).toBe('ok');
    const same = join(dir, 'big-ticks-twice.jsonl');
    await writeFile(same, `${run1(0, '9007199254740993', 1)}\n${run1(1, '9007199254740993', 2)}\n`);
    expect((await run(same, '--checker', 'cron')).code).toBe(1);
  });

  it('reads a porcupine log line with 160 000 spaces within its time budget (took 16 s with --timeout 1s)', async () => {
    const path = join(dir, 'spaces.log');
    await writeFile(path, `INFO  jepsen.util - 0 :invoke :read nil${' '.repeat(160_000)}x\n`);
    const started = performance.now();
    const { code, err } = await run(path, '--model', 'cas-register', '--timeout', '1s');
    expect(performance.now() - started).toBeLessThan(3000);
    expect(code).toBe(3);
    expect(err).toMatch(/spaces\.log:1: expected nil as the value of a read invoke/);
  });

  it('ends with unknown when reading outlasts --timeout, for lock checkers too (reading was not budgeted)', async () => {
    const path = join(dir, 'long-run.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      lines.push(event(2 * i, 'resource', 'ok', 'enter', { client: 1, fence: String(i), accepted: true }));
      lines.push(event(2 * i + 1, 'resource', 'ok', 'leave', { client: 1 }));
    }
    await writeFile(path, `${lines.join('\n')}\n`);
    const { code, out } = await run(path, '--checker', 'mutex', '--timeout', '1ms');
    expect(code).toBe(2);
    expect(out).toMatch(
      /mutex: unknown \(reading .*long-run\.jsonl stopped after line \d+: its time budget ran out\)/,
    );
  });

  it('gives up on a FIFO nobody writes when the budget ends, and reads one that is written', async () => {
    const fifo = join(dir, 'history.fifo');
    await promisify(execFile)('mkfifo', [fifo]);
    const started = performance.now();
    const idle = await run(fifo, '--format', 'jsonl', '--model', 'register', '--timeout', '300ms');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(idle.code).toBe(2);
    expect(idle.out).toMatch(/reading .*history\.fifo stopped after line 0: its time budget ran out/);
    const written = writeFile(
      fifo,
      `${event(0, 1, 'invoke', 'write', 1)}\n${event(1, 1, 'ok', 'write', 1)}\n`,
    );
    const read = await run(fifo, '--format', 'jsonl', '--model', 'register', '--timeout', '10s');
    await written;
    expect(read.code).toBe(0);
  });

  it('answers every read failure with exit 3 naming the file: endless lines, I/O errors, bad UTF-8', async () => {
    for (const format of ['jsonl', 'edn', 'porcupine-log']) {
      const zero = await run('/dev/zero', '--format', format, '--model', 'register');
      expect(zero, format).toMatchObject({ code: 3, out: '' });
      expect(zero.err).toMatch(/\/dev\/zero:1: expected a line of at most 67108864 bytes/);
      // Reading /proc/self/mem fails with EIO: a read error, not an internal error.
      const io = await run('/proc/self/mem', '--format', format, '--model', 'register');
      expect(io, format).toMatchObject({ code: 3, out: '' });
      expect(io.err).toMatch(/cannot read \/proc\/self\/mem: .*EIO/);
    }
    const latin1 = join(dir, 'latin1.jsonl');
    await writeFile(
      latin1,
      Buffer.concat([
        Buffer.from(`${event(0, 1, 'invoke', 'write', 'x')}\n`),
        Buffer.from(`${event(1, 1, 'ok', 'write', 'caf\u00e9')}\n`, 'latin1'),
      ]),
    );
    const utf8 = await run(latin1, '--model', 'register');
    expect(utf8.code).toBe(3);
    expect(utf8.err).toContain(`${latin1}:2: expected UTF-8 text`);
  });

  it('refuses JSON and EDN nested thousands deep with exit 3 naming the line', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const json = join(dir, 'deep.jsonl');
    await writeFile(
      json,
      `${event(0, 1, 'invoke', 'write', 1)}\n${event(1, 1, 'ok', 'write', 1).replace('"value":1', `"value":${deep}`)}\n`,
    );
    const edn = join(dir, 'deep.edn');
    await writeFile(
      edn,
      `[{:process 0 :type :invoke :f :write :value 1}\n{:process 0 :type :ok :f :write :value ${deep}}]`,
    );
    for (const path of [json, edn]) {
      const { code, err } = await run(path, '--model', 'register');
      expect(code).toBe(3);
      expect(err).toMatch(new RegExp(`${path}:2: expected (values|collections) nested at most 100 deep`));
    }
  });

  it('keeps integers exact: 2^53 + 1 written and 2^53 read is illegal (JSONL), EDN bigints convict (not unknown)', async () => {
    const json = join(dir, 'big.jsonl');
    await writeFile(
      json,
      [
        '{"index":0,"time":1,"process":0,"type":"invoke","f":"write","value":9007199254740993}',
        '{"index":1,"time":2,"process":0,"type":"ok","f":"write","value":9007199254740993}',
        '{"index":2,"time":3,"process":1,"type":"invoke","f":"read","value":null}',
        '{"index":3,"time":4,"process":1,"type":"ok","f":"read","value":9007199254740992}',
      ].join('\n'),
    );
    const jsonRun = await run(json, '--model', 'register');
    expect(jsonRun.code).toBe(1);
    expect(jsonRun.out).toContain('read 9007199254740992, which no op had started writing');
    const edn = join(dir, 'big.edn');
    await writeFile(
      edn,
      `[{:process 0 :type :invoke :f :write :value 18446744073709551616}
{:process 0 :type :ok :f :write :value 18446744073709551616}
{:process 1 :type :invoke :f :read :value nil}
{:process 1 :type :ok :f :read :value 18446744073709551617}]`,
    );
    for (const extra of [[], ['--json'], ['--html', join(dir, 'big.html')]]) {
      const ednRun = await run(edn, '--model', 'cas-register', ...extra);
      expect(ednRun.code, extra.join(' ')).toBe(1);
    }
    expect(await readFile(join(dir, 'big.html'), 'utf8')).toContain('18446744073709551617');
  });

  it('gives lock checkers JSON fences past 2^53 exactly: a shared fence 2^53 + 1 is caught', async () => {
    const enter = (index: number, client: number, fence: string) =>
      `{"index":${index},"time":${index},"process":"resource","type":"ok","f":"enter","value":{"client":${client},"fence":${fence},"accepted":true}}`;
    const leave = (index: number, client: number) => event(index, 'resource', 'ok', 'leave', { client });
    const path = join(dir, 'big-fence.jsonl');
    await writeFile(
      path,
      [enter(0, 1, '9007199254740993'), leave(1, 1), enter(2, 2, '9007199254740993'), leave(3, 2)].join('\n'),
    );
    const shared = await run(path, '--checker', 'fence', '--json');
    expect(shared.code).toBe(1);
    expect(JSON.parse(shared.out).checks.fence.violations[0]).toMatchObject({ kind: 'shared-fence' });
    await writeFile(
      path,
      [enter(0, 1, '9007199254740993'), leave(1, 1), enter(2, 2, '9007199254740994'), leave(3, 2)].join('\n'),
    );
    expect((await run(path, '--checker', 'fence')).code).toBe(0);
    // A bigint where a lock checker wants a number is bad input with a message, not a crash (unknown).
    await writeFile(path, event(0, 'resource', 'ok', 'init', {}).replace('{}', '{"stock":9007199254740993}'));
    const stock = await run(path, '--checker', 'inventory');
    expect(stock.code).toBe(3);
    expect(stock.err).toMatch(/got 9007199254740993/);
  });

  it('refuses a completion timed before its invoke, naming file and line', async () => {
    const path = join(dir, 'backwards.jsonl');
    await writeFile(
      path,
      `${JSON.stringify({ index: 0, time: 50, process: 1, type: 'invoke', f: 'write', value: 1 })}\n${JSON.stringify({ index: 1, time: 40, process: 1, type: 'ok', f: 'write', value: 1 })}\n`,
    );
    const { code, err } = await run(path, '--model', 'register');
    expect(code).toBe(3);
    expect(err).toContain(
      `${path}:2: expected a completion of process 1's :write no earlier than its invoke (time 50)`,
    );
  });

  it('names file and line of a pairing error among resource lines (it said "event at position N")', async () => {
    const path = join(dir, 'unpaired.jsonl');
    await writeFile(
      path,
      [
        event(0, 1, 'invoke', 'write', 1),
        event(1, 'resource', 'ok', 'enter', { client: 1, fence: '1', accepted: true }),
        event(2, 'resource', 'ok', 'leave', { client: 1 }),
        '',
        event(3, 2, 'ok', 'write', 1),
      ].join('\n'),
    );
    const { code, err } = await run(path, '--model', 'register', '--checker', 'mutex');
    expect(code).toBe(3);
    expect(err).toContain(`${path}:5: expected an open invoke by process 2 before this completion`);
    expect(err).not.toMatch(/position/);
  });

  it('escapes control characters from the history in every human-readable output', async () => {
    const hostile = 'k\u001b[2J\u001b]0;owned\u0007\u009b31m\u202eevil\nfake: ok';
    const path = join(dir, 'escapes.jsonl');
    await writeFile(
      path,
      [
        event(0, 1, 'invoke', 'put', 'a', { key: hostile }),
        event(1, 1, 'ok', 'put', 'a', { key: hostile }),
        event(2, 2, 'invoke', 'get', null, { key: hostile }),
        event(3, 2, 'ok', 'get', hostile, { key: hostile }),
        event(4, 'resource', 'ok', 'enter', { client: 1, fence: '1', accepted: true }, { key: hostile }),
        event(5, 'resource', 'ok', 'enter', { client: 2, fence: '2', accepted: true }, { key: hostile }),
      ].join('\n'),
    );
    // C0 but tab and line feed, DEL, C1, bidi controls: what a terminal may act on.
    const raw = (text: string) =>
      [...text].some((ch) => {
        const c = ch.charCodeAt(0);
        return (
          (c < 0x20 && c !== 9 && c !== 10) ||
          (c >= 0x7f && c <= 0x9f) ||
          (c >= 0x202a && c <= 0x202e) ||
          (c >= 0x2066 && c <= 0x2069)
        );
      });
    const human = await run(path, '--model', 'kv', '--checker', 'mutex');
    expect(human.code).toBe(1);
    expect(raw(human.out)).toBe(false);
    expect(human.out).toContain('\\x1b[2J');
    expect(human.out).not.toMatch(/^fake: ok/m);
    const json = await run(path, '--model', 'kv', '--checker', 'mutex', '--json');
    expect(raw(json.out)).toBe(false);
    expect(JSON.parse(json.out).checks.linearizability.partitions[0].key).toBe(hostile);
    // A summary that quotes the history: an op name the model does not know is left out and named.
    const badOp = join(dir, 'bad-op.jsonl');
    await writeFile(
      badOp,
      `${event(0, 1, 'invoke', `w\u001b[31m\u009b`, 1)}\n${event(1, 1, 'ok', `w\u001b[31m\u009b`, 1)}\n`,
    );
    const bad = await run(badOp, '--model', 'register');
    expect(bad.code).toBe(2); // nothing left to check
    expect(raw(bad.out)).toBe(false);
    expect(bad.out).toContain('\\x1b[31m\\x9b');
    // Bad input whose message quotes the history: a cas whose value is no [old new] pair.
    const badCas = join(dir, 'bad-cas.jsonl');
    await writeFile(
      badCas,
      `${event(0, 1, 'invoke', 'cas', 'w\u001b[31m\u009b')}\n${event(1, 1, 'ok', 'cas', 'w\u001b[31m\u009b')}\n`,
    );
    const badShape = await run(badCas, '--model', 'cas-register');
    expect(badShape.code).toBe(3);
    expect(raw(badShape.err)).toBe(false);
    expect(badShape.err).toContain('\\u001b[31m\\x9b');
    const flag = await run(path, '--model', 'x\u001b[31m\u009b');
    expect(flag.code).toBe(64); // a usage error
    expect(raw(flag.err)).toBe(false);
    const named = await run(join(dir, 'e\u001b[31m.jsonl'), '--model', 'register');
    expect(named.code).toBe(3);
    expect(raw(named.err)).toBe(false);
  });

  it("refuses --initial-stock '' and other non-integers (it was taken as 0)", async () => {
    const file = await writeHistory('stock.jsonl', overlappingInventory());
    for (const stock of ['', ' ', '0x10', '1e3', '-1', '2.5']) {
      const { code, out } = await run(file, '--checker', 'inventory', '--initial-stock', stock);
      expect(code, JSON.stringify(stock)).toBe(64); // a usage error
      expect(out).toBe('');
    }
  });

  it('never writes the HTML report over the history it reads', async () => {
    const history = join(dir, 'keep.jsonl');
    const text = `${JSON.stringify({ index: 0, time: 1, process: 1, type: 'invoke', f: 'write', value: 1 })}\n`;
    await writeFile(history, text);
    for (const html of [history, join(dir, '.', 'keep.jsonl')]) {
      const { code, out, err } = await run(history, '--model', 'register', '--html', html);
      expect(code).toBe(3);
      expect(out).toBe('');
      expect(err).toMatch(/it is the history itself/);
    }
    expect(await readFile(history, 'utf8')).toBe(text);
  });

  it('fails a bad --html path before printing any verdict', async () => {
    const log = `${DATA}/porcupine/jepsen/etcd_101.log`;
    for (const html of ['/nonexistent/dir/r.html', dir, '/dev/null', '/proc/version']) {
      const { code, out, err } = await run(log, '--model', 'cas-register', '--html', html);
      expect(code, html).toBe(3);
      expect(out, html).toBe('');
      expect(err).toMatch(/cannot write the HTML report/);
    }
  });
});

describe('fencekit-check as a built binary', () => {
  const bin = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

  it('exits with the verdict code and prints help', async () => {
    const exec = promisify(execFile);
    const help = await exec(process.execPath, [bin, '--help']);
    expect(help.stdout).toMatch(/Exit codes: 0 ok, 1 illegal, 2 unknown/);
    const illegal = await exec(process.execPath, [
      bin,
      `${DATA}/porcupine/jepsen/etcd_000.log`,
      '--model',
      'cas-register',
    ]).catch((e: { code: number }) => e);
    expect((illegal as { code: number }).code).toBe(1);
  });

  it('answers /dev/zero with exit 3 and a message, not a crash (it died with exit 1 = illegal)', async () => {
    const exec = promisify(execFile);
    for (const format of ['jsonl', 'edn', 'porcupine-log']) {
      const zero = (await exec(process.execPath, [
        bin,
        '/dev/zero',
        '--format',
        format,
        '--model',
        'register',
      ]).catch((e: unknown) => e)) as { code: number; stdout: string; stderr: string };
      expect(zero.code, format).toBe(3);
      expect(zero.stderr).toMatch(
        /^fencekit-check: \/dev\/zero:1: expected a line of at most 67108864 bytes/,
      );
      expect(zero.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('fencekit-check: malformed and unjudgeable histories, whichever checker runs (R2 #6-#8)', () => {
  const write = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  it('pairs client ops for the lock checkers too: a completion before its invoke, a stray ok are bad input (were exit 0)', async () => {
    const backwards = await write(
      'backwards-client.jsonl',
      [
        '{"index":0,"time":100,"process":1,"type":"invoke","f":"acquire","value":null}',
        '{"index":1,"time":50,"process":1,"type":"ok","f":"acquire","value":null}',
        '{"index":2,"time":60,"process":1,"type":"ok","f":"release","value":null}',
        '{"index":3,"time":70,"process":"resource","type":"ok","f":"enter","value":{"client":1,"fence":"1","accepted":true}}',
        '{"index":4,"time":80,"process":"resource","type":"ok","f":"leave","value":{"client":1}}',
      ].join('\n'),
    );
    for (const checker of ['all', 'mutex']) {
      const result = await run(backwards, '--checker', checker);
      expect(result.code, checker).toBe(3);
      expect(result.err).toMatch(/backwards-client\.jsonl:2/);
    }
    const stray = await write(
      'stray-ok.jsonl',
      [
        '{"index":0,"time":60,"process":1,"type":"ok","f":"release","value":null}',
        '{"index":1,"time":70,"process":"resource","type":"ok","f":"enter","value":{"client":1,"fence":"1","accepted":true}}',
      ].join('\n'),
    );
    expect((await run(stray, '--checker', 'mutex')).code).toBe(3);
  });

  it('judges nothing, and says unknown, for a history without one completed op (was ok, "steps 0")', async () => {
    const jsonl = await write(
      'open-only.jsonl',
      '{"index":0,"time":0,"process":0,"type":"invoke","f":"read","value":null}\n',
    );
    const edn = await write('open-only.edn', '[{:process 0 :type :invoke :f :read :value nil}]\n');
    const log = await write('open-only.log', 'INFO  jepsen.util - 0\t:invoke\t:read\tnil\n');
    for (const path of [jsonl, edn, log]) {
      const result = await run(path, '--model', 'register');
      expect(result.code, path).toBe(2);
      expect(result.out).toMatch(/nothing to check: the history has no completed client operation/);
    }
    // Lock histories whose lines judge nothing: a stock set and never sold, a leave with no enter.
    const init = await write(
      'init-only.jsonl',
      '{"index":0,"time":0,"process":"resource","type":"ok","f":"init","value":{"stock":5}}\n',
    );
    const leave = await write(
      'leave-only.jsonl',
      '{"index":0,"time":0,"process":"resource","type":"ok","f":"leave","value":{"client":1}}\n',
    );
    expect((await run(init, '--checker', 'all')).code).toBe(2);
    expect((await run(leave, '--checker', 'all')).code).toBe(2);
  });

  it('judges acknowledged buys without resource lines against --initial-stock, as the library does (was unknown)', async () => {
    const buys = await write(
      'inv-buys-only.jsonl',
      [
        '{"index":0,"time":10,"process":1,"type":"invoke","f":"buy","value":null}',
        '{"index":1,"time":20,"process":2,"type":"invoke","f":"buy","value":null}',
        '{"index":2,"time":40,"process":1,"type":"ok","f":"buy","value":null}',
        '{"index":3,"time":50,"process":2,"type":"ok","f":"buy","value":null}',
      ].join('\n'),
    );
    const result = await run(buys, '--checker', 'inventory', '--initial-stock', '1', '--json');
    expect(result.code).toBe(1);
    const kinds = JSON.parse(result.out).checks.inventory.violations.map((v: { kind: string }) => v.kind);
    expect(kinds).toContain('oversell');
  });

  it('refuses two events with one index, naming both lines (the verdict followed the line order)', async () => {
    const enter = (index: number, time: number, client: number | null) =>
      `{"index":${index},"time":${time},"process":"resource","type":"ok","f":"enter","value":{"client":${client},"accepted":true}}`;
    const leave = (index: number, time: number, client: number) =>
      `{"index":${index},"time":${time},"process":"resource","type":"ok","f":"leave","value":{"client":${client}}}`;
    const a = await write(
      'dupidx-a.jsonl',
      [enter(0, 0, 1), leave(1, 10, 1), enter(1, 10, 2), leave(3, 20, 2)].join('\n'),
    );
    const b = await write(
      'dupidx-b.jsonl',
      [enter(0, 0, 1), enter(1, 10, 2), leave(1, 10, 1), leave(3, 20, 2)].join('\n'),
    );
    for (const path of [a, b]) {
      const result = await run(path, '--checker', 'mutex');
      expect(result.code, path).toBe(3);
      expect(result.err).toMatch(/dupidx-.\.jsonl:3: "index" 1 is already the index of line 2/);
    }
    // The bad line is the one named, not the first line with its index.
    const err = await write(
      'dupidx-err.jsonl',
      [enter(0, 0, 1), leave(1, 5, 1), enter(0, 9, null)].join('\n'),
    );
    expect((await run(err, '--checker', 'mutex')).err).toMatch(/dupidx-err\.jsonl:3:/);
  });

  it('escapes the line separators U+2028/U+2029 and the bidi marks LRM/RLM/ALM (reached the terminal raw)', async () => {
    const odd = 'a\u2028b\u2029c\u200ed\u200fe\u061cf';
    const path = await write(
      'esc-marks.jsonl',
      `{"index":0,"time":0,"process":"resource","type":"ok","f":"enter","key":${JSON.stringify(odd)},"value":{"client":1,"accepted":true}}\n` +
        `{"index":1,"time":1,"process":"resource","type":"ok","f":"enter","key":${JSON.stringify(odd)},"value":{"client":2,"accepted":true}}\n`,
    );
    for (const flags of [[], ['--json']]) {
      const result = await run(path, '--checker', 'mutex', ...flags);
      expect(result.code).toBe(1);
      expect(result.out + result.err).not.toMatch(/[\u2028\u2029\u200e\u200f\u061c]/);
    }
    expect(
      JSON.parse((await run(path, '--checker', 'mutex', '--json')).out).checks.mutex.violations[0].key,
    ).toBe(odd);
  });

  it('a lone :info line is a history with nothing to judge in a porcupine log as in EDN (the log was "holds no events")', async () => {
    const log = await write('info-only.log', 'INFO  jepsen.util - 0\t:info\t:read\tnil\n');
    const edn = await write('stray-info.edn', '[{:process 0 :type :info :f :read :value nil}]\n');
    for (const path of [log, edn]) {
      const result = await run(path, '--model', 'register');
      expect(result.code, path).toBe(2);
      expect(result.out).toMatch(/nothing to check/);
    }
    expect((await run(await write('blank.log', '\n\n'), '--model', 'register')).code).toBe(3);
  });
});
