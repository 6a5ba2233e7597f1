import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import {
  type BenchLocker,
  type ContendedPermitsResult,
  measureContendedPermits,
  median,
  percentile,
} from '@fencekit/core/bench';
import { roundTripCycle } from './cycles.js';
import { startEnsemble } from './ensemble.js';
import { SemaphoreFencekitLocker, SemaphoreFloorLocker } from './semaphore-lockers.js';

/**
 * `npm run bench:semaphore -w @fencekit/zk` (issue #19): fencekit's semaphore beside the bare-library
 * floor of a permit hand-off, on one real 3-node ensemble (own process), with the round trip measured
 * in the same run. Each round: 200 round trips sampled, then both rings (order alternating per round),
 * `CLIENTS` clients on `PERMITS` permits holding `HOLD_MS`. Target: fencekit's hand-off p99 ≤ the
 * floor's p99 + 3 round trips; Jain ≥ 0.95.
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

interface Ring {
  readonly name: string;
  readonly lockers: readonly (BenchLocker & { close(): Promise<void> })[];
  readonly results: ContendedPermitsResult[];
}

async function main(): Promise<void> {
  const uptimeBefore = uptime();
  const started = new Date();
  const ensemble = await startEnsemble();
  try {
    const { servers } = ensemble;
    const stamp = Date.now();
    const rtt = await roundTripCycle(servers);
    const floor: Ring = {
      name: 'floor: bare create-sequential + getChildren watch',
      lockers: await Promise.all(
        Array.from({ length: CLIENTS }, () => SemaphoreFloorLocker.open(servers, PERMITS)),
      ),
      results: [],
    };
    const fencekit: Ring = {
      name: 'fencekit ZkSharedLockClient semaphore',
      lockers: Array.from({ length: CLIENTS }, () => new SemaphoreFencekitLocker(servers, PERMITS)),
      results: [],
    };
    const rttRounds: number[][] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < 20; i++) await rtt.once();
        const times: number[] = [];
        for (let i = 0; i < RTT_SAMPLES; i++) {
          const start = performance.now();
          await rtt.once();
          times.push(performance.now() - start);
        }
        rttRounds.push(times);
        const order = round % 2 === 0 ? [floor, fencekit] : [fencekit, floor];
        for (const ring of order) {
          const resource =
            ring === floor ? `/fencekit-bench/sem-${stamp}-${round}` : `bench/sem/${stamp}/${round}`;
          // Every client's session and folders warm before the clock starts.
          for (const locker of ring.lockers) await (await locker.lock(resource))();
          const result = await measureContendedPermits(ring.lockers, resource, {
            seconds: CONTENDED_SECONDS,
            holdMs: HOLD_MS,
            permits: PERMITS,
          });
          ring.results.push(result);
          console.error(
            `round ${round + 1}/${ROUNDS} ${ring.name}: ${fmt(result.grantsPerSecond, 0)} grants/s, hand-off p99 ${fmt(result.handoffP99Ms)} ms, Jain ${fmt(result.jain, 3)}`,
          );
        }
      }
    } finally {
      // Every client closed before the ensemble goes, or the bare ones would keep reconnecting.
      await Promise.all([...floor.lockers, ...fencekit.lockers, rtt].map((c) => c.close()));
    }
    const uptimeAfter = uptime();
    const rttP50s = rttRounds.map((times) => percentile(times, 0.5));
    const rttMs = median(rttP50s);
    const pooled = (ring: Ring) => ring.results.flatMap((r) => r.handoffs);
    const floorP99 = percentile(pooled(floor), 0.99);
    const oursP99 = percentile(pooled(fencekit), 0.99);
    const bound = floorP99 + 3 * rttMs;
    const perRoundRtts = fencekit.results.map(
      (r, i) =>
        (r.handoffP99Ms - (floor.results[i]?.handoffP99Ms ?? Number.NaN)) / (rttP50s[i] ?? Number.NaN),
    );
    const jain = median(fencekit.results.map((r) => r.jain));
    const row = (ring: Ring) => {
      const all = pooled(ring);
      return `| ${ring.name} | ${spread(
        ring.results.map((r) => r.grantsPerSecond),
        0,
      )} | ${fmt(percentile(all, 0.5))} | ${fmt(percentile(all, 0.99))} | ${spread(ring.results.map((r) => r.handoffP99Ms))} | ${all.length} | ${ring.results.reduce((s, r) => s + r.overtakes, 0)} | ${spread(
        ring.results.map((r) => r.jain),
        3,
      )} |`;
    };
    const lines = [
      `date: ${started.toISOString()} – ${new Date().toISOString()}`,
      `command: BENCH_ROUNDS=${ROUNDS} BENCH_CONTENDED_SECONDS=${CONTENDED_SECONDS} npm run bench:semaphore -w @fencekit/zk`,
      `uptime before: ${uptimeBefore}`,
      `uptime after:  ${uptimeAfter}`,
      `ZooKeeper 3-node local ensemble (loopback, own process), all clients on follower ${ensemble.follower} (leader ${ensemble.leader}); node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
      `${ROUNDS} rounds, rings interleaved (order alternating); each: ${CLIENTS} clients (own sessions), ${PERMITS} permits, ~${HOLD_MS} ms hold, ${CONTENDED_SECONDS} s`,
      'median (min–max) over rounds; hand-off p50/p99 pooled over all rounds',
      '',
      '| contended | grants/s | hand-off p50 ms | hand-off p99 ms | per-round p99 ms | hand-offs | overtakes | Jain |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      row(floor),
      row(fencekit),
      '',
      `round trip (exists /, bare library, ${RTT_SAMPLES} a round): p50 ${spread(rttP50s, 3)} ms, p99 pooled ${fmt(percentile(rttRounds.flat(), 0.99), 3)} ms`,
      '',
      `targets: hand-off p99 ${fmt(oursP99)} ms ≤ floor p99 ${fmt(floorP99)} + 3 × RTT ${fmt(rttMs, 3)} = ${fmt(bound)} ms → ${oursP99 <= bound ? 'met' : 'MISSED'} (${fmt((oursP99 - floorP99) / rttMs, 1)} round trips; per round ${fmt(Math.min(...perRoundRtts), 1)}–${fmt(Math.max(...perRoundRtts), 1)})`,
      `         Jain ${fmt(jain, 3)} (median of rounds) ≥ 0.95 → ${jain >= 0.95 ? 'met' : 'MISSED'}`,
    ];
    console.log(lines.join('\n'));
  } finally {
    await ensemble.close();
  }
}

await main();
