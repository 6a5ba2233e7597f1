/**
 * `npm run bench:semaphore -w @fencekit/redis` (issue #19): fencekit's semaphore beside redis-semaphore's
 * `Semaphore` on one redis-server (started here by @fencekit/cluster), with the floors.
 *
 * - uncontended: one client each, acquire + release serially, every contender interleaved in 250 ms
 *   slices (core's `measureInterleaved`); the ratio to each floor is taken within a round.
 * - contended: `--clients` clients (each its own connections) on one semaphore of `--permits`, each
 *   holding `--hold-ms`, one contender at a time, the order rotating every round (core's
 *   `measureContendedPermits`: grants/s, hand-off from a release to the grant it made room for, Jain).
 *
 * Options: --rounds 5 --seconds 1 --contended-seconds 2 --clients 16 --permits 4 --hold-ms 1
 * --only <substring>[,<substring>…].
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { startCluster } from '@fencekit/cluster';
import {
  type ContendedPermitsResult,
  measureContendedPermits,
  median,
  percentile,
} from '@fencekit/core/bench';
import { measurePublishFloor } from './handoff-floor.js';
import { measureUncontended, type Uncontended } from './measure.js';
import { type SemaphoreContender, semaphoreContenders } from './semaphore-contenders.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '1' },
    'contended-seconds': { type: 'string', default: '2' },
    clients: { type: 'string', default: '16' },
    permits: { type: 'string', default: '4' },
    'hold-ms': { type: 'string', default: '1' },
    only: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const contendedSeconds = Number(values['contended-seconds']);
const clients = Number(values.clients);
const permits = Number(values.permits);
const holdMs = Number(values['hold-ms']);
const only = values.only?.split(',').filter((part) => part !== '');
const selected = semaphoreContenders.filter(
  (c) => only === undefined || only.some((part) => c.name.includes(part)),
);

interface Runs {
  uncontended: Uncontended[];
  contended: ContendedPermitsResult[];
}

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const loadAtStart = load();
const startedAt = new Date();
const cluster = await startCluster({ topology: 'redis', nodes: 1 });
const closeOnSignal = (): void => {
  void cluster.close().finally(() => process.exit(130));
};
process.once('SIGINT', closeOnSignal);
process.once('SIGTERM', closeOnSignal);
/** PUBLISH → delivery, every round, pooled: the least any wake-up by message takes here. */
const publishFloor: number[] = [];
const publishP99s: number[] = [];
const runs = new Map<SemaphoreContender, Runs>(selected.map((c) => [c, { uncontended: [], contended: [] }]));
// measure.ts' uncontended race takes contenders with the permit count already bound.
const bound = selected.map((c) => ({
  ...c,
  open: (endpoints: readonly string[]) => c.open(endpoints, permits),
}));
try {
  const endpoints = cluster.endpoints;
  for (let round = 0; round < rounds; round++) {
    const tag = `sem-${round}-${Math.random().toString(36).slice(2, 8)}`;
    const uncontended = await measureUncontended(bound, endpoints, tag, seconds);
    for (const [i, c] of bound.entries()) {
      const result = uncontended.get(c);
      if (result !== undefined) runs.get(selected[i] as SemaphoreContender)?.uncontended.push(result);
    }
    process.stderr.write(`round ${round + 1}/${rounds}: uncontended done\n`);
    const pings = await measurePublishFloor(endpoints[0] as string, 500, 1);
    publishFloor.push(...pings);
    publishP99s.push(percentile(pings, 0.99));
    const blocking = selected.filter((c) => c.blocking);
    for (let k = 0; k < blocking.length; k++) {
      const contender = blocking[(k + round) % blocking.length] as SemaphoreContender;
      const lockers = Array.from({ length: clients }, () => contender.open(endpoints, permits));
      const resource = `${tag}-c`;
      try {
        // Every client's connections (and scripts) warm before the clock starts.
        for (const locker of lockers) await (await locker.lock(resource))();
        const result = await measureContendedPermits(lockers, resource, {
          seconds: contendedSeconds,
          holdMs,
          permits,
        });
        runs.get(contender)?.contended.push(result);
      } finally {
        await Promise.all(lockers.map((l) => l.close()));
      }
      process.stderr.write(`round ${round + 1}/${rounds}: ${contender.name} contended done\n`);
    }
  }
} finally {
  await cluster.close();
}
const loadAtEnd = load();

const f = (x: number, digits = 2): string => (Number.isNaN(x) ? '—' : x.toFixed(digits));
/** The median and, in brackets, the range over rounds. */
const spread = (xs: number[], digits = 2, scale = 1): string =>
  xs.length === 0
    ? '—'
    : `${f(median(xs) / scale, digits)} (${f(Math.min(...xs) / scale, digits)}–${f(Math.max(...xs) / scale, digits)})`;
/** Per round: a's uncontended rate over b's in the same round (both ran interleaved). */
const perRound = (a: Runs, b: Runs | undefined): number[] =>
  b === undefined
    ? []
    : a.uncontended.map((u, i) => u.opsPerSecond / (b.uncontended[i]?.opsPerSecond ?? Number.NaN));
const floorOf = (prefix: string) => [...runs].find(([c]) => c.name.startsWith(prefix))?.[1];
const mutexFloor = floorOf('raw SET NX PX');
const semaphoreFloor = floorOf('raw semaphore floor');

const redisVersion = execFileSync('/usr/bin/redis-server', ['--version']).toString().trim().split(' ')[2];
console.log(`date: ${startedAt.toISOString()} – ${new Date().toISOString()}`);
console.log(`load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadAtEnd} at the end`);
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `node ${process.version}, redis-server ${redisVersion}, loopback`,
);
console.log(
  `command: npm run bench:semaphore -w @fencekit/redis -- --rounds ${rounds} --seconds ${seconds} ` +
    `--contended-seconds ${contendedSeconds} --clients ${clients} --permits ${permits} --hold-ms ${holdMs}` +
    (values.only === undefined ? '' : ` --only '${values.only}'`),
);
console.log(
  `median (min–max) over ${rounds} rounds; × floor = a contender's rate / the floor's in the same round; ` +
    'hand-off percentiles pooled over all rounds, and the range of the per-round p99\n',
);
console.log('Uncontended (one client, acquire + release back to back):\n');
console.log('| contender | acq+rel/s (k) | × SET NX PX floor | × semaphore floor | p50 ms | p99 ms |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const c of selected) {
  const run = runs.get(c) as Runs;
  console.log(
    `| ${c.name} | ${spread(
      run.uncontended.map((u) => u.opsPerSecond),
      2,
      1000,
    )} | ${spread(perRound(run, mutexFloor), 3)} | ${spread(perRound(run, semaphoreFloor), 3)} | ${f(
      median(run.uncontended.map((u) => u.p50Ms)),
      3,
    )} | ${f(median(run.uncontended.map((u) => u.p99Ms)), 3)} |`,
  );
}
console.log(`\nContended (${clients} clients, ${permits} permits, ~${holdMs} ms hold):\n`);
console.log(
  '| contender | grants/s | hand-off p50 ms | hand-off p99 ms | p99 per round | hand-offs | overtakes | Jain |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const c of selected.filter((x) => x.blocking)) {
  const run = runs.get(c) as Runs;
  const handoffs = run.contended.flatMap((x) => x.handoffs);
  const p99s = run.contended.map((x) => x.handoffP99Ms);
  console.log(
    `| ${c.name} | ${spread(
      run.contended.map((x) => x.grantsPerSecond),
      0,
    )} | ${f(percentile(handoffs, 0.5), 3)} | ${f(percentile(handoffs, 0.99), 3)} | ${f(Math.min(...p99s), 2)}–${f(
      Math.max(...p99s),
      2,
    )} | ${handoffs.length} | ${run.contended.reduce((sum, x) => sum + x.overtakes, 0)} | ${spread(
      run.contended.map((x) => x.jain),
      3,
    )} |`,
  );
}
console.log(
  `\nBare PUBLISH → delivery on another connection (500 a round, ~1 ms apart, nothing else running): ` +
    `p50 ${f(percentile(publishFloor, 0.5), 3)} ms, p99 ${f(percentile(publishFloor, 0.99), 3)} ms ` +
    `(per-round p99 ${f(Math.min(...publishP99s), 3)}–${f(Math.max(...publishP99s), 3)} ms)`,
);
