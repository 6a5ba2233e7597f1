import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus, totalmem } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { type Contender, etcd3Lock, fencekit, fencekitPerGrant, floor } from './contenders.js';
import { type Contended, contended, median, roundTrip, type Uncontended, uncontended } from './measure.js';

/**
 * `npm run bench -w @fencekit/etcd`: every contender on one local 3-member etcd (run by a child
 * process, so the cluster's proxies do not share the clients' event loop) in one run. Uncontended,
 * the contenders take turns in 250 ms slices; contended runs alternate per round. The table reports
 * medians over rounds.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const UNCONTENDED_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONTENDED_SECONDS = Number(process.env.BENCH_CONTENDED_SECONDS ?? 5);
const CLIENTS = 8;
const HOLD_MS = 2;

const contenders: Contender[] = [floor, fencekit, fencekitPerGrant, etcd3Lock];

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  const server = spawn(process.execPath, [fileURLToPath(new URL('./cluster-process.js', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
    const cluster = JSON.parse(line) as { endpoints: string[] };
    const probe = new Etcd3({ hosts: cluster.endpoints.map((e) => `http://${e}`) });
    const rtt = await roundTrip(() => probe.get('bench-rtt').string(), 300);
    probe.close();

    const calm: Record<string, Uncontended[]> = {};
    const busy: Record<string, Contended[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const calmRound = await uncontended(contenders, cluster.endpoints, `u${round}`, UNCONTENDED_SECONDS);
      for (const c of contenders) {
        const result = calmRound.get(c);
        if (!result) continue;
        calm[c.name] = [...(calm[c.name] ?? []), result];
        console.error(`round ${round + 1} uncontended ${c.name}: ${fmt(result.cyclesPerSecond, 0)}/s`);
      }
      for (const c of contenders) {
        const result = await contended(
          c,
          cluster.endpoints,
          `c${round}`,
          CONTENDED_SECONDS,
          CLIENTS,
          HOLD_MS,
        );
        busy[c.name] = [...(busy[c.name] ?? []), result];
        console.error(
          `round ${round + 1} contended ${c.name}: handoff p99 ${fmt(result.handoffP99Ms)} ms, Jain ${fmt(result.jain, 3)}`,
        );
      }
    }

    const m = <T>(rows: T[] | undefined, pick: (r: T) => number) => median((rows ?? []).map(pick));
    const floorOps = m(calm[floor.name], (r) => r.cyclesPerSecond);
    const floorHandoffP99 = m(busy[floor.name], (r) => r.handoffP99Ms);
    const lines: string[] = [];
    lines.push(
      `Run ${new Date().toISOString().slice(0, 10)} · ${cpus().length}× ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB · Node ${process.version} · ${etcdVersion()} (3 local members) · ${ROUNDS} rounds, medians`,
      `Round trip (linearizable get): p50 ${fmt(rtt.p50Ms, 2)} ms, p99 ${fmt(rtt.p99Ms, 2)} ms`,
      '',
      `| uncontended, 1 client | cycles/s | × floor | p50 ms | p99 ms |`,
      `| --- | ---: | ---: | ---: | ---: |`,
    );
    for (const c of contenders) {
      const ops = m(calm[c.name], (r) => r.cyclesPerSecond);
      lines.push(
        `| ${c.name} | ${fmt(ops, 0)} | ${fmt(ops / floorOps, 2)} | ${fmt(
          m(calm[c.name], (r) => r.p50Ms),
          2,
        )} | ${fmt(
          m(calm[c.name], (r) => r.p99Ms),
          2,
        )} |`,
      );
    }
    lines.push(
      '',
      `| contended, ${CLIENTS} clients, hold ${HOLD_MS} ms | grants/s | handoff p50 ms | handoff p99 ms | p99 − floor p99 (round trips) | Jain |`,
      `| --- | ---: | ---: | ---: | ---: | ---: |`,
    );
    for (const c of contenders) {
      const p99 = m(busy[c.name], (r) => r.handoffP99Ms);
      lines.push(
        `| ${c.name} | ${fmt(
          m(busy[c.name], (r) => r.grantsPerSecond),
          0,
        )} | ${fmt(
          m(busy[c.name], (r) => r.handoffP50Ms),
          2,
        )} | ${fmt(p99, 2)} | ${fmt((p99 - floorHandoffP99) / rtt.p50Ms, 1)} | ${fmt(
          m(busy[c.name], (r) => r.jain),
          3,
        )} |`,
      );
    }
    const ours = {
      ratio: m(calm[fencekit.name], (r) => r.cyclesPerSecond) / floorOps,
      handoffRtts: (m(busy[fencekit.name], (r) => r.handoffP99Ms) - floorHandoffP99) / rtt.p50Ms,
      jain: m(busy[fencekit.name], (r) => r.jain),
    };
    lines.push(
      '',
      `Targets: uncontended ≥ 0.8× floor → ${fmt(ours.ratio, 2)}× ${ours.ratio >= 0.8 ? 'met' : 'MISSED'}; ` +
        `handoff p99 within 3 round trips of the floor → ${fmt(ours.handoffRtts, 1)} ${ours.handoffRtts <= 3 ? 'met' : 'MISSED'}; ` +
        `Jain ≥ 0.95 → ${fmt(ours.jain, 3)} ${ours.jain >= 0.95 ? 'met' : 'MISSED'}`,
    );
    console.log(lines.join('\n'));
  } finally {
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    await exited;
  }
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
