import { cpus, loadavg, totalmem } from 'node:os';
import { jainIndex, median, percentile } from '@fencekit/core/bench';
import { floorCycle, lockCycle, roundTripCycle } from './cycles.js';
import { startEnsemble } from './ensemble.js';
import { FencekitLocker, FloorLocker } from './lockers.js';
import { pool, runRounds } from './workloads.js';

/**
 * `npm run bench -w @fencekit/zk`: everything in one run against one real 3-node ensemble (in a
 * process of its own), so the figures compare. Targets (issue 5): lock ≥ 0.8× the floor's cycles/s;
 * contended handoff p99 within 3 round trips of the floor's handoff p99; Jain ≥ 0.95 over 8 clients.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const BLOCK_MS = 1_000;
const CONTENDED_SECONDS = 1.5;
const CLIENTS = 8;
const HOLD_MS = 1;
const WARMUP = 200;

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function main(): Promise<void> {
  const loadBefore = load();
  const ensemble = await startEnsemble();
  try {
    const { servers } = ensemble;
    const floorLockers = await Promise.all(Array.from({ length: CLIENTS }, () => FloorLocker.open(servers)));
    const fencekitLockers = Array.from({ length: CLIENTS }, () => new FencekitLocker(servers));
    const stamp = Date.now();
    const cycles = {
      floor: await floorCycle(servers),
      lock: await lockCycle(servers),
      rtt: await roundTripCycle(servers),
    };
    let measured: Awaited<ReturnType<typeof runRounds>>;
    try {
      measured = await runRounds(
        cycles,
        {
          floor: { lockers: floorLockers, resource: `/fencekit-bench/ring-${stamp}` },
          lock: { lockers: fencekitLockers, resource: `bench/contended/${stamp}` },
        },
        {
          rounds: ROUNDS,
          blockMs: BLOCK_MS,
          contendedSeconds: CONTENDED_SECONDS,
          holdMs: HOLD_MS,
          warmup: WARMUP,
        },
      );
    } finally {
      // Every client closed before the ensemble goes, or the bare ones would keep reconnecting.
      await Promise.all(
        [...floorLockers, ...fencekitLockers, ...Object.values(cycles)].map((c) => c.close()),
      );
    }
    const { floor, lock, rtt } = measured.uncontended as Record<
      'floor' | 'lock' | 'rtt',
      { rates: number[]; durations: number[] }
    >;
    const ratios = lock.rates.map((rate, i) => rate / (floor.rates[i] ?? Number.NaN));
    const ratio = median(ratios);
    const rttMs = median(rtt.durations);
    const floorRing = pool(measured.contended.floor ?? []);
    const lockRing = pool(measured.contended.lock ?? []);
    const bound = floorRing.handoffP99Ms + 3 * rttMs;
    const fairness = jainIndex(lockRing.grantsPerClient);
    const row = (name: string, s: { rates: number[]; durations: number[] }, vs: string) =>
      `| ${name} | ${fmt(median(s.rates), 0)} | ${fmt(median(s.durations))} | ${fmt(percentile(s.durations, 0.99))} | ${vs} |`;

    const lines = [
      `ZooKeeper 3.8.0, 3-node local ensemble (loopback, own process), node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB; ${new Date().toISOString()}`,
      `load average before ${loadBefore}, after ${load()}; all clients on follower ${ensemble.follower} (leader ${ensemble.leader})`,
      `${ROUNDS} rounds; each round: every uncontended contender for ${BLOCK_MS} ms (order alternating), then each ${CLIENTS}-client ring for ${CONTENDED_SECONDS} s (${HOLD_MS} ms hold)`,
      'cycles/s = median of the rounds; vs floor = median of the per-round ratios; p50/p99 over every cycle',
      '',
      '| uncontended (1 client) | cycles/s | p50 ms | p99 ms | vs floor |',
      '| --- | ---: | ---: | ---: | ---: |',
      row('floor: create + delete (bare library)', floor, '1.00×'),
      row(
        'fencekit ZkLockClient acquire + release',
        lock,
        `${fmt(ratio)}× (target ≥ 0.80×; rounds ${fmt(Math.min(...ratios))}–${fmt(Math.max(...ratios))})`,
      ),
      row('one round trip (exists /)', rtt, ''),
      '',
      `| contended (${CLIENTS} clients, ${HOLD_MS} ms hold) | grants/s | handoffs | handoff p50 ms | handoff p99 ms | Jain |`,
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      `| floor: bare-library recipe (delete + watch) | ${fmt(floorRing.grantsPerSecond, 0)} | ${floorRing.handoffs} | ${fmt(floorRing.handoffP50Ms)} | ${fmt(floorRing.handoffP99Ms)} | ${fmt(jainIndex(floorRing.grantsPerClient), 3)} |`,
      `| fencekit ZkLockClient | ${fmt(lockRing.grantsPerSecond, 0)} | ${lockRing.handoffs} | ${fmt(lockRing.handoffP50Ms)} | ${fmt(lockRing.handoffP99Ms)} | ${fmt(fairness, 3)} |`,
      '',
      `targets: uncontended ${fmt(ratio)}× ≥ 0.80× → ${ratio >= 0.8 ? 'met' : 'missed'}; handoff p99 ${fmt(lockRing.handoffP99Ms)} ms ≤ floor p99 ${fmt(floorRing.handoffP99Ms)} + 3 × RTT ${fmt(rttMs)} = ${fmt(bound)} ms → ${lockRing.handoffP99Ms <= bound ? 'met' : 'missed'}; Jain ${fmt(fairness, 3)} ≥ 0.95 → ${fairness >= 0.95 ? 'met' : 'missed'}`,
      `fencekit grants per client: ${lockRing.grantsPerClient.join(', ')}`,
    ];
    console.log(lines.join('\n'));
  } finally {
    await ensemble.close();
  }
}

await main();
