import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { startServedCluster } from '@fencekit/cluster';
import {
  type ContendedPermitsResult,
  measureContendedPermits,
  median,
  percentile,
} from '@fencekit/core/bench';
import { Etcd3 } from 'etcd3';
import { roundTrips } from './measure.js';
import { fencekitSemaphore, type SemaphoreContender, semaphoreFloor } from './semaphore-contenders.js';

/**
 * `npm run bench:semaphore -w @fencekit/etcd` (issue #19): fencekit's semaphore beside the bare-client
 * floor of a permit hand-off, on one local 3-member etcd (child process), with the round trip (a
 * linearizable get) measured in every round. Each round: 200 round trips, then both rings (order
 * alternating), `CLIENTS` clients on `PERMITS` permits holding `HOLD_MS`. Target: fencekit's hand-off
 * p99 ≤ the floor's p99 + 3 round trips; Jain ≥ 0.95.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONTENDED_SECONDS = Number(process.env.BENCH_CONTENDED_SECONDS ?? 3);
const CLIENTS = 16;
const PERMITS = 4;
const HOLD_MS = 1;
const RTT_SAMPLES = 200;

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const spread = (xs: number[], digits = 2) =>
  `${fmt(median(xs), digits)} (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})`;

async function main(): Promise<void> {
  const uptimeBefore = uptime();
  const started = new Date();
  const server = await startServedCluster<{ endpoints: string[] }>(
    new URL('./cluster-process.js', import.meta.url),
  );
  const rings = [semaphoreFloor, fencekitSemaphore];
  const results = new Map<SemaphoreContender, ContendedPermitsResult[]>(rings.map((c) => [c, []]));
  const rttRounds: number[][] = [];
  try {
    const { endpoints } = server;
    const probe = new Etcd3({ hosts: endpoints.map((e) => `http://${e}`) });
    try {
      for (let round = 0; round < ROUNDS; round++) {
        rttRounds.push(await roundTrips(() => probe.get('bench-rtt').string(), RTT_SAMPLES));
        for (let k = 0; k < rings.length; k++) {
          const contender = rings[(round + k) % rings.length] as SemaphoreContender;
          const resource = `sem-${round}`;
          const lockers = Array.from({ length: CLIENTS }, () => contender.open(endpoints, PERMITS));
          try {
            // Every client's connections (and watches) warm before the clock starts.
            for (const locker of lockers) await (await locker.lock(resource))();
            const result = await measureContendedPermits(lockers, resource, {
              seconds: CONTENDED_SECONDS,
              holdMs: HOLD_MS,
              permits: PERMITS,
            });
            results.get(contender)?.push(result);
            console.error(
              `round ${round + 1}/${ROUNDS} ${contender.name}: ${fmt(result.grantsPerSecond, 0)} grants/s, hand-off p99 ${fmt(result.handoffP99Ms)} ms, Jain ${fmt(result.jain, 3)}`,
            );
          } finally {
            await Promise.all(lockers.map((l) => l.close()));
          }
        }
      }
    } finally {
      probe.close();
    }
  } finally {
    await server.close();
  }
  const uptimeAfter = uptime();
  const rttP50s = rttRounds.map((times) => percentile(times, 0.5));
  const rttMs = median(rttP50s);
  const of = (c: SemaphoreContender) => results.get(c) as ContendedPermitsResult[];
  const pooled = (c: SemaphoreContender) => of(c).flatMap((r) => r.handoffs);
  const floorP99 = percentile(pooled(semaphoreFloor), 0.99);
  const oursP99 = percentile(pooled(fencekitSemaphore), 0.99);
  const bound = floorP99 + 3 * rttMs;
  const perRoundRtts = of(fencekitSemaphore).map(
    (r, i) =>
      (r.handoffP99Ms - (of(semaphoreFloor)[i]?.handoffP99Ms ?? Number.NaN)) / (rttP50s[i] ?? Number.NaN),
  );
  const jain = median(of(fencekitSemaphore).map((r) => r.jain));
  const row = (c: SemaphoreContender) => {
    const all = pooled(c);
    const rs = of(c);
    return `| ${c.name} | ${spread(
      rs.map((r) => r.grantsPerSecond),
      0,
    )} | ${fmt(percentile(all, 0.5))} | ${fmt(percentile(all, 0.99))} | ${spread(rs.map((r) => r.handoffP99Ms))} | ${all.length} | ${rs.reduce((s, r) => s + r.overtakes, 0)} | ${spread(
      rs.map((r) => r.jain),
      3,
    )} |`;
  };
  const lines = [
    `date: ${started.toISOString()} – ${new Date().toISOString()}`,
    `command: BENCH_ROUNDS=${ROUNDS} BENCH_CONTENDED_SECONDS=${CONTENDED_SECONDS} npm run bench:semaphore -w @fencekit/etcd`,
    `uptime before: ${uptimeBefore}`,
    `uptime after:  ${uptimeAfter}`,
    `${etcdVersion()}, 3 local members (child process), node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    `${ROUNDS} rounds, rings interleaved (order alternating); each: ${CLIENTS} clients (own connections), ${PERMITS} permits, ~${HOLD_MS} ms hold, ${CONTENDED_SECONDS} s`,
    'median (min–max) over rounds; hand-off p50/p99 pooled over all rounds',
    '',
    '| contended | grants/s | hand-off p50 ms | hand-off p99 ms | per-round p99 ms | hand-offs | overtakes | Jain |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    row(semaphoreFloor),
    row(fencekitSemaphore),
    '',
    `round trip (linearizable get, ${RTT_SAMPLES} a round): p50 ${spread(rttP50s, 3)} ms, p99 pooled ${fmt(percentile(rttRounds.flat(), 0.99), 3)} ms`,
    '',
    `targets: hand-off p99 ${fmt(oursP99)} ms ≤ floor p99 ${fmt(floorP99)} + 3 × RTT ${fmt(rttMs, 3)} = ${fmt(bound)} ms → ${oursP99 <= bound ? 'met' : 'MISSED'} (${fmt((oursP99 - floorP99) / rttMs, 1)} round trips; per round ${fmt(Math.min(...perRoundRtts), 1)}–${fmt(Math.max(...perRoundRtts), 1)})`,
    `         Jain ${fmt(jain, 3)} (median of rounds) ≥ 0.95 → ${jain >= 0.95 ? 'met' : 'MISSED'}`,
  ];
  console.log(lines.join('\n'));
}

function etcdVersion(): string {
  try {
    return execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0]?.trim() ?? 'etcd';
  } catch {
    return 'etcd';
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
