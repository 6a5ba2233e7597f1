import { startServedCluster } from '@fencekit/cluster';
import { EtcdClient } from '@fencekit/etcd';
import {
  CompareResult,
  CompareTarget,
  Etcd3,
  type ICompare,
  type IRequestOp,
  SortOrder,
  SortTarget,
} from 'etcd3';
import { type Contender, etcd3Lock, fencekit, floor } from './contenders.js';

interface Shape {
  join: 'range' | 'bare' | 'nested';
  guarded: boolean;
  lease: boolean;
  ours: boolean;
}

/** Request shapes sent raw through etcd3 (no library): what each part of ours costs by itself. */
const shapes = (shape: Shape): Contender => ({
  name: `raw: join ${shape.join}, ${shape.guarded ? 'guarded-delete Txn' : 'delete'}${shape.lease ? ', lease' : ''}${shape.ours ? ', our connection options' : ''}`,
  open(endpoints) {
    const etcd = shape.ours
      ? new EtcdClient({ hosts: [...endpoints] }).etcd
      : new Etcd3({ hosts: endpoints.map((e) => `http://${e}`) });
    const leaseId = shape.lease ? etcd.leaseClient.leaseGrant({ TTL: 3600 }).then((r) => r.ID) : undefined;
    return {
      async lock(resource) {
        const lease = leaseId ? await leaseId : undefined;
        const queue = `bench-shapes/${resource}/`;
        const key = Buffer.from(`${queue}k`);
        const put: IRequestOp = {
          request_put: {
            key,
            value: Buffer.from('0123456789abcdef:0123456789abcdef0123456789abcdef0123'),
            ...(lease ? { lease } : {}),
          },
        };
        const newest: IRequestOp = {
          request_range: {
            key: Buffer.from(queue),
            range_end: Buffer.from(`bench-shapes/${resource}0`),
            sort_target: SortTarget.Create,
            sort_order: SortOrder.Descend,
            limit: 2,
            keys_only: true,
          },
        };
        const absent: ICompare = {
          key,
          target: CompareTarget.Create,
          result: CompareResult.Equal,
          create_revision: 0,
        };
        const response =
          shape.join === 'nested'
            ? await etcd.kv.txn({
                compare: [
                  { ...absent, key: Buffer.from(queue), range_end: Buffer.from(`bench-shapes/${resource}0`) },
                ],
                success: [put],
                failure: [{ request_txn: { compare: [absent], success: [put, newest], failure: [] } }],
              })
            : await etcd.kv.txn({
                compare: [absent],
                success: shape.join === 'range' ? [put, newest] : [put],
                failure: [{ request_range: { key, keys_only: true } }],
              });
        const revision = response.header.revision;
        return async () => {
          if (!shape.guarded) {
            await etcd.kv.deleteRange({ key });
            return;
          }
          await etcd.kv.txn({
            compare: [
              { key, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: revision },
            ],
            success: [{ request_delete_range: { key } }],
            failure: [],
          });
        };
      },
      async close() {
        etcd.close();
      },
    };
  },
});

/**
 * Dev tool: client CPU and wall time per acquire+release cycle, contenders alternating in blocks; the
 * `raw:` rows send our request shapes straight through etcd3, so the library's own cost is the
 * difference to the `nested` row (today's join), and `range` is the join before (always reading back).
 * `node bench/dist/profile.js [cycles per block] [blocks] [only]` — with `only` = a contender index, runs
 * just that one (for `node --cpu-prof`).
 */
const PER_BLOCK = Number(process.argv[2] ?? 200);
const BLOCKS = Number(process.argv[3] ?? 6);
const only = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const all: Contender[] = [
  floor,
  fencekit,
  shapes({ join: 'nested', guarded: true, lease: true, ours: true }),
  shapes({ join: 'range', guarded: true, lease: true, ours: true }),
  etcd3Lock,
];
const contenders = only === undefined ? all : [all[only] as Contender];

const server = await startServedCluster<{ endpoints: string[] }>(
  new URL('./cluster-process.js', import.meta.url),
);
try {
  const { endpoints } = server;
  const lockers = contenders.map((c) => c.open(endpoints));
  for (const l of lockers) for (let i = 0; i < 100; i++) await (await l.lock('p'))();
  const wall = contenders.map(() => 0);
  const cpu = contenders.map(() => 0);
  for (let b = 0; b < BLOCKS; b++) {
    for (const [i, l] of lockers.entries()) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let k = 0; k < PER_BLOCK; k++) await (await l.lock('p'))();
      wall[i] = (wall[i] ?? 0) + performance.now() - t0;
      const c = process.cpuUsage(c0);
      cpu[i] = (cpu[i] ?? 0) + (c.user + c.system) / 1000;
    }
  }
  const n = PER_BLOCK * BLOCKS;
  for (const [i, c] of contenders.entries()) {
    console.log(
      `${c.name}: wall ${((wall[i] ?? 0) / n).toFixed(3)} ms/cycle, client CPU ${((cpu[i] ?? 0) / n).toFixed(3)} ms/cycle`,
    );
  }
  await Promise.all(lockers.map((l) => l.close()));
} finally {
  await server.close();
}
