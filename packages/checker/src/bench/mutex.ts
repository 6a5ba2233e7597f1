/**
 * Benchmark of the mutual-exclusion checker on large generated lock histories.
 * Each case runs in a fresh Node process (so peak RSS belongs to that case alone), three times; the
 * table gives medians. `check` times the checker on a history already in memory; `jsonl+check` also
 * streams it from a history.jsonl file first, as the CLI does.
 * Run: `npm run bench:mutex -w @fencekit/checker` (builds first).
 *
 * A history of N operations here is N critical sections, i.e. 2N resource lines (`enter` + `leave`),
 * by 8 clients taking turns, with one overlap every 10 000 sections so the checker also reports.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatHistoryEvent, readHistoryJsonl } from '../history/jsonl.js';
import type { HistoryEvent } from '../history/types.js';
import { checkMutex } from '../lock/mutex.js';

const RUNS = 3;
const CLIENTS = 8;

interface Sample {
  mode: 'check' | 'jsonl+check';
  operations: number;
  lines: number;
  ms: number;
  /** CPU time (user + system) of the check: a fairer figure than wall time on a shared machine. */
  cpuMs: number;
  maxRssMiB: number;
  overlaps: number;
}

/** Deterministic generator (LCG) so every run checks the same history. */
function generate(sections: number): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  let seed = 42;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  let t = 1_000_000;
  for (let s = 0; s < sections; s++) {
    const client = s % CLIENTS;
    const enter = t;
    const hold = 20_000 + Math.floor(rand() * 80_000);
    const leave = enter + hold;
    const overlapping = s % 10_000 === 9_999;
    events.push({
      index: events.length,
      time: enter,
      process: 'resource',
      type: 'ok',
      f: 'enter',
      value: { client, fence: String(s + 1), accepted: true },
    });
    if (overlapping) {
      // The next holder enters before this one leaves: a real violation for the checker to find.
      t = enter + Math.floor(hold / 2);
      events.push({
        index: events.length,
        time: t,
        process: 'resource',
        type: 'ok',
        f: 'enter',
        value: { client: (client + 1) % CLIENTS, fence: String(s + 2), accepted: true },
      });
      events.push({
        index: events.length,
        time: leave,
        process: 'resource',
        type: 'ok',
        f: 'leave',
        value: { client },
      });
      s++;
      const end = leave + 10_000;
      events.push({
        index: events.length,
        time: end,
        process: 'resource',
        type: 'ok',
        f: 'leave',
        value: { client: (client + 1) % CLIENTS },
      });
      t = end + 1_000;
      continue;
    }
    events.push({
      index: events.length,
      time: leave,
      process: 'resource',
      type: 'ok',
      f: 'leave',
      value: { client },
    });
    t = leave + 1_000 + Math.floor(rand() * 5_000);
  }
  return events;
}

/**
 * One measurement in this process. `check`: the history is generated in memory first (it is part of
 * the peak RSS, as a real caller holds it too). `jsonl+check`: the file was written by the parent, so
 * this process's peak RSS is exactly the CLI path's: stream the file into events, then check.
 */
async function runCase(mode: Sample['mode'], operations: number, file?: string): Promise<Sample> {
  let history: HistoryEvent[] = mode === 'check' ? generate(operations) : [];
  (globalThis as { gc?: () => void }).gc?.();
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  if (file !== undefined) {
    history = [];
    for await (const event of readHistoryJsonl(file)) history.push(event);
  }
  const result = checkMutex(history);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpu = process.cpuUsage(cpuStart);
  return {
    mode,
    operations,
    lines: history.length,
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    overlaps: result.stats.overlaps,
  };
}

/** Writes the generated history as history.jsonl (in the parent, so children measure only reading it). */
async function writeHistoryFile(dir: string, operations: number): Promise<string> {
  const file = join(dir, `history-${operations}.jsonl`);
  await writeFile(file, `${generate(operations).map(formatHistoryEvent).join('\n')}\n`);
  return file;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const [, , mode, ops, file] = process.argv;
  if (mode === 'check' || mode === 'jsonl+check') {
    process.stdout.write(JSON.stringify(await runCase(mode, Number(ops), file)));
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'fencekit-bench-'));
  try {
    await table(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function table(dir: string): Promise<void> {
  const cases: [Sample['mode'], number][] = [
    ['check', 100_000],
    ['check', 500_000],
    ['check', 1_000_000],
    ['jsonl+check', 100_000],
    ['jsonl+check', 500_000],
    ['jsonl+check', 1_000_000],
  ];
  console.log(`mutual-exclusion checker, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}`);
  console.log(
    `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; median of ${RUNS} fresh processes\n`,
  );
  console.log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(
    '| mode | operations (sections) | lines | wall (ms) | CPU (ms) | max RSS (MiB) | overlaps found | target (wall) |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  const self = fileURLToPath(import.meta.url);
  for (const [m, n] of cases) {
    const args = ['--expose-gc', '--max-old-space-size=4096', self, m, String(n)];
    if (m === 'jsonl+check') args.push(await writeHistoryFile(dir, n));
    const samples: Sample[] = [];
    for (let r = 0; r < RUNS; r++) {
      const out = execFileSync(process.execPath, args, { encoding: 'utf8' });
      samples.push(JSON.parse(out) as Sample);
    }
    const ms = median(samples.map((s) => s.ms));
    const cpu = median(samples.map((s) => s.cpuMs));
    const rss = median(samples.map((s) => s.maxRssMiB));
    const first = samples[0]!;
    const target =
      n >= 500_000 ? (ms < 2000 && rss < 1024 ? '< 2 s, < 1 GiB: met' : '< 2 s, < 1 GiB: MISSED') : '';
    console.log(
      `| ${m} | ${n.toLocaleString('en')} | ${first.lines.toLocaleString('en')} | ${ms.toFixed(0)} | ${cpu.toFixed(0)} | ${rss.toFixed(0)} | ${first.overlaps} | ${target} |`,
    );
  }
}

await main();
