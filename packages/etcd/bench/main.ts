import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { startServedCluster } from '@fencekit/cluster';
import { type ContendedResult, jainIndex, measureContended, median, percentile } from '@fencekit/core/bench';
import { Etcd3 } from 'etcd3';
import { type Contender, etcd3Lock, fencekit, fencekitPerGrant, floor } from './contenders.js';
import { roundTrips, type Uncontended, uncontendedRound } from './measure.js';

/**
 * `npm run bench -w @fencekit/etcd`: every contender against one local 3-member etcd (run by a child
 * process, so the cluster's proxies do not share the clients' event loop), in one run.
 *
 * Each round: round trips sampled, the uncontended race (contenders taking turns in short slices),
 * then the contended ring for every contender (order rotated per round). The uncontended ratio to the
 * floor is taken per round — both sides of it measured in the same seconds — and the table reports
 * the median of those ratios, with their range, so one noisy stretch cannot swing the result.
 * Handoff percentiles pool every round's handoffs (p99 of a few hundred handoffs is a handful of
 * samples; of all rounds, a steadier one).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const UNCONTENDED_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 200);
const CONTENDED_SECONDS = Number(process.env.BENCH_CONTENDED_SECONDS ?? 4);
const CLIENTS = 8;
const HOLD_MS = 2;

const contenders: Contender[] = [floor, fencekit, fencekitPerGrant, etcd3Lock];

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

interface Tally {
  rates: number[];
  cycles: number[];
  /** This contender's rate / the floor's, per round. */
  ratios: number[];
  contended: ContendedResult[];
}

async function main(): Promise<void> {
  const loadBefore = load();
  const started = new Date();
  const server = await startServedCluster<{ endpoints: string[] }>(
    new URL('./cluster-process.js', import.meta.url),
  );
  try {
    const cluster = server;
    const probe = new Etcd3({ hosts: cluster.endpoints.map((e) => `http://${e}`) });
    const tallies = new Map<Contender, Tally>(
      contenders.map((c) => [c, { rates: [], cycles: [], ratios: [], contended: [] }]),
    );
    const rtts: number[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        rtts.push(...(await roundTrips(() => probe.get('bench-rtt').string(), 100)));
        const calm = await uncontendedRound(
          contenders,
          cluster.endpoints,
          `u${round}`,
          UNCONTENDED_SECONDS,
          SLICE_MS,
        );
        const floorRate = calm.get(floor)?.cyclesPerSecond ?? Number.NaN;
        for (const c of contenders) {
          const result = calm.get(c) as Uncontended;
          const tally = tallies.get(c) as Tally;
          tally.rates.push(result.cyclesPerSecond);
          tally.cycles.push(...result.cycles);
          tally.ratios.push(result.cyclesPerSecond / floorRate);
          console.error(
            `round ${round + 1}/${ROUNDS} uncontended ${c.name}: ${fmt(result.cyclesPerSecond, 0)}/s (${fmt(result.cyclesPerSecond / floorRate, 2)}× floor)`,
          );
        }
        for (let k = 0; k < contenders.length; k++) {
          const c = contenders[(round + k) % contenders.length] as Contender;
          const result = await contendedRound(c, cluster.endpoints, `c${round}`);
          (tallies.get(c) as Tally).contended.push(result);
          console.error(
            `round ${round + 1}/${ROUNDS} contended ${c.name}: handoff p99 ${fmt(result.handoffP99Ms)} ms, Jain ${fmt(result.jain, 3)}`,
          );
        }
      }
    } finally {
      probe.close();
    }
    console.log(report(tallies, rtts, started, loadBefore, load()));
  } finally {
    await server.close();
  }
}

/** `CLIENTS` clients (own connections) on one resource for `CONTENDED_SECONDS`, holding `HOLD_MS`. */
async function contendedRound(
  contender: Contender,
  endpoints: readonly string[],
  resource: string,
): Promise<ContendedResult> {
  const lockers = Array.from({ length: CLIENTS }, () => contender.open(endpoints));
  try {
    for (const locker of lockers) await (await locker.lock(resource))();
    return await measureContended(lockers, resource, { seconds: CONTENDED_SECONDS, holdMs: HOLD_MS });
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
}

function report(
  tallies: Map<Contender, Tally>,
  rtts: number[],
  started: Date,
  loadBefore: string,
  loadAfter: string,
): string {
  const rtt = median(rtts);
  const t = (c: Contender) => tallies.get(c) as Tally;
  const handoffs = (c: Contender) => t(c).contended.flatMap((r) => r.handoffs);
  const floorP99 = percentile(handoffs(floor), 0.99);
  const range = (values: number[], digits = 2) =>
    `${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)}`;
  const lines = [
    `Run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC · ${cpus().length}× ${cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB · Node ${process.version} · ${etcdVersion()} (3 local members)`,
    `Load average (1/5/15 min) before ${loadBefore}, after ${loadAfter} · ${ROUNDS} rounds: uncontended ${UNCONTENDED_SECONDS} s per contender in ${SLICE_MS} ms slices, contended ${CONTENDED_SECONDS} s per contender`,
    `Round trip (linearizable get): p50 ${fmt(rtt, 2)} ms, p99 ${fmt(percentile(rtts, 0.99), 2)} ms`,
    '',
    '| uncontended, 1 client | cycles/s (median of rounds) | × floor (median of per-round ratios) | per-round range | p50 ms | p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const c of contenders) {
    const x = t(c);
    lines.push(
      `| ${c.name} | ${fmt(median(x.rates), 0)} | ${fmt(median(x.ratios), 2)} | ${range(x.ratios)} | ${fmt(percentile(x.cycles, 0.5), 2)} | ${fmt(percentile(x.cycles, 0.99), 2)} |`,
    );
  }
  lines.push(
    '',
    `| contended, ${CLIENTS} clients, hold ${HOLD_MS} ms | grants/s | handoff p50 ms | handoff p99 ms | p99 − floor p99 (round trips) | Jain (median, min) |`,
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const c of contenders) {
    const x = t(c);
    const all = handoffs(c);
    const jains = x.contended.map((r) => r.jain);
    lines.push(
      `| ${c.name} | ${fmt(median(x.contended.map((r) => r.grantsPerSecond)), 0)} | ${fmt(percentile(all, 0.5), 2)} | ${fmt(percentile(all, 0.99), 2)} | ${fmt((percentile(all, 0.99) - floorP99) / rtt, 1)} | ${fmt(median(jains), 3)}, ${fmt(Math.min(...jains), 3)} |`,
    );
  }
  const ours = t(fencekit);
  const ratio = median(ours.ratios);
  const handoffRtts = (percentile(handoffs(fencekit), 0.99) - floorP99) / rtt;
  const perRoundRtts = ours.contended.map(
    (r, i) => (r.handoffP99Ms - (t(floor).contended[i]?.handoffP99Ms ?? Number.NaN)) / rtt,
  );
  const jain = median(ours.contended.map((r) => r.jain));
  const pooledJain = jainIndex(
    ours.contended.reduce<number[]>((sum, r) => r.grantsPerClient.map((g, i) => g + (sum[i] ?? 0)), []),
  );
  lines.push(
    '',
    `Targets (@fencekit/etcd, default sessions):`,
    `- uncontended ≥ 0.8× floor → ${fmt(ratio, 2)}× (per round ${range(ours.ratios)}) ${ratio >= 0.8 ? 'met' : 'MISSED'}`,
    `- handoff p99 within 3 round trips of the floor's → ${fmt(handoffRtts, 1)} round trips (per round ${range(perRoundRtts, 1)}) ${handoffRtts <= 3 ? 'met' : 'MISSED'}`,
    `- Jain ≥ 0.95 → ${fmt(jain, 3)} (median of rounds; all rounds' grants pooled ${fmt(pooledJain, 3)}) ${jain >= 0.95 ? 'met' : 'MISSED'}`,
  );
  return lines.join('\n');
}

function etcdVersion(): string {
  try {
    const out = execFileSync('etcd', ['--version'], { encoding: 'utf8' });
    return out.split('\n')[0]?.trim() ?? 'etcd';
  } catch {
    return 'etcd';
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
