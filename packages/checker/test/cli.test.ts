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

describe('fencekit-check bad input', () => {
  it.each([
    [['nope.jsonl', '--checker', 'mutex'], /cannot read nope\.jsonl/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`], /--model <model> and\/or --checker/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'btree'], /Allowed choices are/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'register', '--timeout', 'soon'], /duration/],
    [[`${DATA}/knossos/mutex/bad/etcd.edn`, '--checker', 'mutex'], /read harness histories \(jsonl\)/],
    [[`${DATA}/porcupine/jepsen/etcd_000.log`, '--checker', 'paxos'], /"paxos" is not one of/],
    [
      [`${DATA}/porcupine/jepsen/etcd_000.log`, '--model', 'register', '--memory', 'lots'],
      /size such as 512MiB/,
    ],
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
});
