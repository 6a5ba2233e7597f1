import { startServedCluster } from '@fencekit/cluster';
import { percentile } from '@fencekit/core/bench';
import { EtcdClient } from '@fencekit/etcd';
import type { IRequestOp, ITxnRequest } from 'etcd3';

/**
 * Dev tool: where a contended handoff's time goes. `node bench/dist/handoff.js [seconds] [clients]`.
 * Eight @fencekit/etcd clients take turns on one lock (hold 2 ms) like the benchmark; every client's
 * Txns are timed at the `etcd3` call, so each handoff splits into
 *   release  — the holder's release() call to its delete Txn answered,
 *   wake     — that answer to the next holder starting its position re-read (watch delivery; it can
 *              overlap the release, since etcd may notify the watcher before answering the holder),
 *   locate   — the re-read Txn's round trip,
 *   resolve  — its answer to acquire() resolving in the caller.
 */
const SECONDS = Number(process.argv[2] ?? 10);
const CLIENTS = Number(process.argv[3] ?? 8);
const HOLD_MS = 2;

type Kind = 'join' | 'locate' | 'leave' | 'other';
interface Call {
  kind: Kind;
  start: number;
  end: number;
}

function kindOf(request: ITxnRequest): Kind {
  const success: IRequestOp[] = request.success ?? [];
  if (success.some((op) => op.request_put)) return 'join';
  if (success.some((op) => op.request_delete_range)) return 'leave';
  if ((request.compare ?? []).length === 0) return 'locate';
  return 'other';
}

const server = await startServedCluster<{ endpoints: string[] }>(
  new URL('./cluster-process.js', import.meta.url),
);
try {
  const { endpoints } = server;
  const calls: Call[][] = [];
  const clients = Array.from({ length: CLIENTS }, (_, i) => {
    const client = new EtcdClient({ hosts: endpoints, prefix: 'bench-handoff' });
    const mine: Call[] = [];
    calls[i] = mine;
    const kv = client.etcd.kv;
    const txn = kv.txn.bind(kv);
    kv.txn = async (request, options) => {
      const call: Call = { kind: kindOf(request), start: performance.now(), end: Number.NaN };
      try {
        return await txn(request, options);
      } finally {
        call.end = performance.now();
        mine.push(call);
      }
    };
    return client;
  });
  for (const c of clients) await (await c.acquire('h', { ttlMs: 10_000 })).release();
  for (const list of calls) list.length = 0;

  const grants: { client: number; grantedAt: number; releasingAt: number }[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    clients.map(async (client, i) => {
      while (performance.now() < end) {
        const lease = await client.acquire('h', { ttlMs: 10_000, waitMs: 60_000 });
        const grantedAt = performance.now();
        await new Promise((r) => setTimeout(r, HOLD_MS));
        const releasingAt = performance.now();
        await lease.release();
        grants.push({ client: i, grantedAt, releasingAt });
      }
    }),
  );
  grants.sort((a, b) => a.grantedAt - b.grantedAt);
  const rows: { total: number; release: number; wake: number; locate: number; resolve: number }[] = [];
  let viaJoin = 0;
  for (let k = 1; k < grants.length; k++) {
    const before = grants[k - 1];
    const next = grants[k];
    if (!before || !next || before.client === next.client) continue;
    const leave = calls[before.client]?.find((c) => c.kind === 'leave' && c.start >= before.releasingAt);
    const mine = (calls[next.client] ?? []).filter((c) => c.end <= next.grantedAt);
    const last = mine[mine.length - 1];
    if (!leave || !last) continue;
    if (last.kind !== 'locate') {
      viaJoin++;
      continue;
    }
    rows.push({
      total: next.grantedAt - before.releasingAt,
      release: leave.end - before.releasingAt,
      wake: last.start - leave.end,
      locate: last.end - last.start,
      resolve: next.grantedAt - last.end,
    });
  }
  const cols = ['total', 'release', 'wake', 'locate', 'resolve'] as const;
  console.log(
    `${rows.length} handoffs through a watch (+${viaJoin} granted by the join itself), ${CLIENTS} clients`,
  );
  console.log(`| phase | p50 ms | p90 ms | p99 ms | mean of the slowest 5 % |`);
  console.log('| --- | ---: | ---: | ---: | ---: |');
  const slow = [...rows].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(rows.length / 20)));
  for (const col of cols) {
    const values = rows.map((r) => r[col]);
    const tail = slow.reduce((s, r) => s + r[col], 0) / slow.length;
    console.log(
      `| ${col} | ${percentile(values, 0.5).toFixed(2)} | ${percentile(values, 0.9).toFixed(2)} | ${percentile(values, 0.99).toFixed(2)} | ${tail.toFixed(2)} |`,
    );
  }
  await Promise.all(clients.map((c) => c.close()));
} finally {
  await server.close();
}
