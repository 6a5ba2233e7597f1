/**
 * Benchmark of the linearizability checker against porcupine's figures in
 * `../shared/data/porcupine/expected.tsv` (porcupine v1.3.0, Go 1.19, one of these 2-core machines).
 * Run: `npm run bench:linearizability -w @fencekit/checker` (builds first).
 *
 * - etcd: all 102 Jepsen etcd logs in one Node process, each timed from text to verdict (parsing
 *   included; file reading not), after two warm-up passes; ROUNDS rounds, per-file medians, and the
 *   median of the per-round totals. Wall and CPU time both, since the machine is shared.
 * - kv: c50-ok, c50-bad (and c10), each in a fresh Node process (so its peak RSS is its own),
 *   deciding every key (per-partition verdicts): the first check cold (what one CLI run costs), then
 *   four warm ones; three processes, medians. Parsing included.
 * - model steps/s: the cas-register model's step alone, and the search's steps per second of search.
 * Set FENCEKIT_SHARED_DATA to point elsewhere than ../shared/data.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseOperations } from '../history/load.js';
import { checkLinearizable } from '../linearizability/check.js';
import { kv } from '../models/kv.js';
import { Inconsistent } from '../models/model.js';
import { casRegister } from '../models/register.js';

const ROUNDS = 7;
const KV_RUNS = 3;
const data =
  process.env.FENCEKIT_SHARED_DATA ?? fileURLToPath(new URL('../../../../../shared/data/', import.meta.url));
const root = `${data.endsWith('/') ? data : `${data}/`}porcupine/`;

interface Expected {
  file: string;
  ops: number;
  verdict: string;
  porcupineMs: number;
}

const expected: Expected[] = readFileSync(`${root}expected.tsv`, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => line.split('\t'))
  .map(([file, ops, verdict, ms]) => ({
    file: file ?? '',
    ops: Number(ops),
    verdict: verdict ?? '',
    porcupineMs: Number(ms),
  }));

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/**
 * Child mode: check one kv file deciding every key, print JSON. The first check runs cold (fresh
 * process, JIT not warmed up: what a CLI run costs); four more give a warm median (a long-lived process).
 */
function kvCase(file: string): void {
  const text = readFileSync(root + file, 'utf8');
  const samples: { wall: number; cpu: number; result: ReturnType<typeof checkLinearizable> }[] = [];
  for (let i = 0; i < 5; i++) {
    const wall0 = performance.now();
    const cpu0 = cpuMs();
    const ops = parseOperations(text, 'edn', file);
    const result = checkLinearizable(ops, kv(), { timeoutMs: 120_000, perPartition: true });
    samples.push({ wall: performance.now() - wall0, cpu: cpuMs() - cpu0, result });
  }
  const cold = samples[0] as (typeof samples)[number];
  const warm = samples.slice(1);
  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  const keys = cold.result.partitions.map((p) => ({
    key: p.key,
    verdict: p.verdict,
    ms: p.ms,
    steps: p.steps,
  }));
  process.stdout.write(
    JSON.stringify({
      verdict: cold.result.verdict,
      wall: cold.wall,
      cpu: cold.cpu,
      warmWall: median(warm.map((s) => s.wall)),
      warmCpu: median(warm.map((s) => s.cpu)),
      maxRssMiB,
      keys,
      steps: cold.result.stats.steps,
    }),
  );
}

function etcd(): void {
  const files = expected.filter((e) => e.file.startsWith('jepsen/'));
  const texts = files.map((e) => readFileSync(root + e.file, 'utf8'));
  const wall: number[][] = files.map(() => []);
  const cpu: number[][] = files.map(() => []);
  const totals: { wall: number; cpu: number }[] = [];
  let steps = 0;
  let searchMs = 0;
  const verdicts: string[] = [];
  for (let round = -2; round < ROUNDS; round++) {
    let roundWall = 0;
    const roundCpu0 = cpuMs();
    files.forEach((e, i) => {
      const t0 = performance.now();
      const c0 = cpuMs();
      const ops = parseOperations(texts[i] as string, 'porcupine-log', e.file);
      const result = checkLinearizable(ops, casRegister(), { timeoutMs: 60_000 });
      const ms = performance.now() - t0;
      const cms = cpuMs() - c0;
      roundWall += ms;
      if (round < 0) return;
      (wall[i] as number[]).push(ms);
      (cpu[i] as number[]).push(cms);
      verdicts[i] = result.verdict;
      if (round === 0) {
        steps += result.stats.steps;
        searchMs += result.partitions.reduce((sum, p) => sum + p.ms, 0);
      }
    });
    if (round >= 0) totals.push({ wall: roundWall, cpu: cpuMs() - roundCpu0 });
  }
  const porcupineTotal = files.reduce((sum, e) => sum + e.porcupineMs, 0);
  const oursTotal = median(totals.map((t) => t.wall));
  const matches = files.filter((e, i) => verdicts[i] === e.verdict).length;
  console.log(
    `### etcd: 102 Jepsen etcd histories (porcupine log format), parse + check, one Node process\n`,
  );
  console.log(`| | fencekit (median of ${ROUNDS} rounds) | porcupine v1.3.0 | ratio |`);
  console.log('| --- | ---: | ---: | ---: |');
  console.log(
    `| total wall time | ${fmt(oursTotal)} ms | ${fmt(porcupineTotal)} ms | ${(oursTotal / porcupineTotal).toFixed(2)}× |`,
  );
  console.log(`| total CPU time | ${fmt(median(totals.map((t) => t.cpu)))} ms | — | |`);
  console.log(
    `| fastest / slowest round (wall) | ${fmt(Math.min(...totals.map((t) => t.wall)))} / ${fmt(Math.max(...totals.map((t) => t.wall)))} ms | | |`,
  );
  console.log(`| verdicts equal to porcupine's | ${matches} / ${files.length} | | |`);
  console.log(
    `| search steps/s (round 1, steps ÷ search wall time) | ${(((steps / searchMs) * 1000) / 1e6).toFixed(2)} M | 6–8 M | |`,
  );
  console.log(
    '\nPer file (medians of wall and CPU ms, parse + check; porcupine: check only, median of 3; ratio = fencekit wall ÷ porcupine):\n',
  );
  console.log('| file | ops | verdict | fencekit wall ms | fencekit CPU ms | porcupine ms | ratio |');
  console.log('| --- | ---: | --- | ---: | ---: | ---: | ---: |');
  files.forEach((e, i) => {
    const ours = median(wall[i] as number[]);
    const mark = verdicts[i] === e.verdict ? e.verdict : `**${verdicts[i]}** (porcupine: ${e.verdict})`;
    console.log(
      `| ${e.file.replace('jepsen/', '')} | ${e.ops} | ${mark} | ${fmt(ours)} | ${fmt(median(cpu[i] as number[]))} | ${fmt(e.porcupineMs)} | ${(ours / e.porcupineMs).toFixed(2)} |`,
    );
  });
}

function kvFiles(): void {
  console.log('\n### kv: every key decided (per-partition verdicts), fresh Node process per run\n');
  console.log(
    '| file | verdict | processes | cold wall ms | cold CPU ms | warm wall ms | warm CPU ms | peak RSS MiB | slowest key (cold) | keys decided | porcupine |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |');
  const porcupine: Record<string, string> = {
    'kv/c50-ok.txt': '≈ 0.2 s',
    'kv/c50-bad.txt':
      'first illegal key 8–28 ms; every key: key 9 102 s, key 7 13 s, key 5 10 s, key 0 undecided after 120 s (19 GB)',
    'kv/c10-ok.txt': '—',
    'kv/c10-bad.txt': '—',
  };
  const self = fileURLToPath(import.meta.url);
  for (const file of ['kv/c50-ok.txt', 'kv/c50-bad.txt', 'kv/c10-ok.txt', 'kv/c10-bad.txt']) {
    const runs = Array.from({ length: KV_RUNS }, () =>
      JSON.parse(execFileSync(process.execPath, [self, '--kv', file], { encoding: 'utf8' })),
    );
    const last = runs[runs.length - 1];
    const slowest = [...last.keys].sort((a, b) => b.ms - a.ms)[0];
    const decided = last.keys.filter((k: { verdict: string }) => k.verdict !== 'unknown').length;
    console.log(
      `| ${file} | ${last.verdict} | ${KV_RUNS} | ${fmt(median(runs.map((r) => r.wall)))} | ${fmt(median(runs.map((r) => r.cpu)))} | ${fmt(median(runs.map((r) => r.warmWall)))} | ${fmt(median(runs.map((r) => r.warmCpu)))} | ${Math.max(...runs.map((r) => r.maxRssMiB)).toFixed(0)} | key ${slowest.key}: ${fmt(slowest.ms)} ms (${slowest.verdict}) | ${decided} / ${last.keys.length} | ${porcupine[file]} |`,
    );
  }
}

function modelSteps(): void {
  const model = casRegister();
  const ops = Array.from({ length: 1024 }, (_, i) => {
    const kind = i % 3;
    const op = {
      id: i,
      process: 0,
      call: i,
      ret: i + 1,
      status: 'ok' as const,
      input: null as unknown,
      output: null as unknown,
      f: 'read',
    };
    if (kind === 0) Object.assign(op, { f: 'read', output: i % 5 });
    else if (kind === 1) Object.assign(op, { f: 'write', input: i % 5 });
    else Object.assign(op, { f: 'cas', input: [i % 5, (i + 1) % 5], output: i % 2 === 0 });
    return model.prepare(op);
  });
  let state: unknown = model.init();
  let steps = 0;
  let legal = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 1000) {
    for (let i = 0; i < 1024; i++) {
      const next = model.step(state as never, ops[i] as never);
      if (!(next instanceof Inconsistent)) {
        state = next;
        legal++;
      }
    }
    steps += 1024;
  }
  const perSecond = steps / ((performance.now() - t0) / 1000);
  console.log(`\n### model steps\n\n| model | steps/s | porcupine |\n| --- | ---: | --- |`);
  console.log(
    `| cas-register step alone (${legal > 0 ? 'mixed legal/illegal' : ''}) | ${(perSecond / 1e6).toFixed(1)} M | 6–8 M (search steps) |`,
  );
}

if (process.argv[2] === '--kv') {
  kvCase(process.argv[3] ?? '');
} else {
  console.log(`## Linearizability benchmark — ${new Date().toISOString().slice(0, 10)}`);
  console.log(
    `machine: ${cpus().length}× ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load average at start ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  etcd();
  kvFiles();
  modelSteps();
  console.log(
    `\nload average at end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
}
