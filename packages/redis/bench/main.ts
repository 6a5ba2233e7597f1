/**
 * `npm run bench -w @fencekit/redis`: every contender side by side on the same five redis-servers
 * (started here by @fencekit/cluster; single-node contenders use the first), in alternating order
 * over several rounds, reporting the median of each figure and the ratios the issue sets targets on.
 *
 * Options: --rounds 5 --seconds 1.5 (uncontended, per contender per round) --contended-seconds 3
 * --clients 8 --hold-ms 1 --only <substring>.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { startCluster } from '@fencekit/cluster';
import { type Contender, contenders } from './contenders.js';
import { type Contended, measureContended, measureUncontended, median, type Uncontended } from './measure.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '1.5' },
    'contended-seconds': { type: 'string', default: '3' },
    clients: { type: 'string', default: '8' },
    'hold-ms': { type: 'string', default: '1' },
    only: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const contendedSeconds = Number(values['contended-seconds']);
const clients = Number(values.clients);
const holdMs = Number(values['hold-ms']);
const selected = contenders.filter((c) => values.only === undefined || c.name.includes(values.only));

interface Runs {
  uncontended: Uncontended[];
  contended: Contended[];
}

const cluster = await startCluster({ topology: 'redis-independent', nodes: 5 });
const closeOnSignal = (): void => {
  void cluster.close().finally(() => process.exit(130));
};
process.once('SIGINT', closeOnSignal);
process.once('SIGTERM', closeOnSignal);
const runs = new Map<Contender, Runs>(selected.map((c) => [c, { uncontended: [], contended: [] }]));
try {
  const endpoints = cluster.endpoints;
  for (let round = 0; round < rounds; round++) {
    // Rotate the order every round, so no contender always runs first (cold) or last (warm).
    const order = selected.map((_, i) => selected[(i + round) % selected.length] as Contender);
    for (const contender of order) {
      const run = runs.get(contender) as Runs;
      const tag = `bench-${round}-${Math.random().toString(36).slice(2, 8)}`;
      run.uncontended.push(await measureUncontended(contender, endpoints, `${tag}-u`, seconds));
      if (contender.blocking) {
        run.contended.push(
          await measureContended(contender, endpoints, `${tag}-c`, contendedSeconds, clients, holdMs),
        );
      }
      process.stderr.write(`round ${round + 1}/${rounds}: ${contender.name} done\n`);
    }
  }
} finally {
  await cluster.close();
}

const med = (xs: number[]): number => median(xs);
const rows = selected.map((c) => {
  const run = runs.get(c) as Runs;
  return {
    name: c.name,
    ops: med(run.uncontended.map((u) => u.opsPerSecond)),
    p50: med(run.uncontended.map((u) => u.p50Ms)),
    p99: med(run.uncontended.map((u) => u.p99Ms)),
    grants: c.blocking ? med(run.contended.map((x) => x.grantsPerSecond)) : Number.NaN,
    h50: c.blocking ? med(run.contended.map((x) => x.handoffP50Ms)) : Number.NaN,
    h99: c.blocking ? med(run.contended.map((x) => x.handoffP99Ms)) : Number.NaN,
    jain: c.blocking ? med(run.contended.map((x) => x.jain)) : Number.NaN,
  };
});
const floor = rows.find((r) => r.name.startsWith('raw'))?.ops ?? Number.NaN;
const f = (x: number, digits = 2): string => (Number.isNaN(x) ? '—' : x.toFixed(digits));
const k = (x: number): string => (Number.isNaN(x) ? '—' : `${(x / 1000).toFixed(2)}k`);

const redisVersion = execFileSync('/usr/bin/redis-server', ['--version']).toString().trim().split(' ')[2];
console.log(`date: ${new Date().toISOString()}`);
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `node ${process.version}, redis-server ${redisVersion}, loopback`,
);
console.log(
  `command: npm run bench -w @fencekit/redis -- --rounds ${rounds} --seconds ${seconds} ` +
    `--contended-seconds ${contendedSeconds} --clients ${clients} --hold-ms ${holdMs}`,
);
console.log(`medians of ${rounds} rounds; uncontended ratio = throughput / raw floor of the same run\n`);
console.log(
  '| contender | uncontended acq+rel/s | × raw floor | p50 ms | p99 ms | contended grants/s | handoff p50 ms | handoff p99 ms | Jain |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(
    `| ${r.name} | ${k(r.ops)} | ${f(r.ops / floor)} | ${f(r.p50, 3)} | ${f(r.p99, 3)} | ${f(r.grants, 0)} | ${f(r.h50, 3)} | ${f(r.h99, 3)} | ${f(r.jain, 3)} |`,
  );
}
const by = (prefix: string) => rows.find((r) => r.name.startsWith(prefix));
const ours5 = by('@fencekit/redlock (5');
const theirs5 = by('redlock@5.0.0-beta.2 (5');
if (ours5 && theirs5) {
  console.log(
    `\n@fencekit/redlock (5 nodes) / redlock@5.0.0-beta.2 (5 nodes), uncontended: ${f(ours5.ops / theirs5.ops)}×`,
  );
}
