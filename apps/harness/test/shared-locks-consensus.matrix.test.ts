import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../src/index.js';
import { deploy, reportsDir, run } from './support/runs.js';

/**
 * The suite's predictions for the shared-lock workloads on ZooKeeper and etcd (suite/shared-lock-cells.ts),
 * on real local ensembles: `ok` under partitions and kills (and client pauses for the fenced rwlock): a
 * holder cut off from the servers loses its validity with its session, and the register refuses a
 * lapsed holder's fence.
 */
const out = reportsDir();
const deployments: Deployment[] = [];
afterAll(async () => {
  for (const d of deployments) await d.close();
  rmSync(out, { recursive: true, force: true });
});

describe.each(['zk', 'etcd'] as const)('shared locks on %s under faults', (backend) => {
  it('rwlock under pause-client, partition and kill, and semaphore under partition and kill: ok', async () => {
    const servers = await deploy(backend);
    deployments.push(servers);
    const base = { backend, clients: 4, time: '12s', out, seed: 7 };
    const cells = [
      { workload: 'rwlock', fault: 'pause-client,partition,kill' },
      { workload: 'semaphore', fault: 'partition,kill' },
    ] as const;
    for (const cell of cells) {
      const { run: r, results } = await run({ ...base, ...cell }, servers);
      expect(
        r.meta.faultsApplied.some((f) => f.applied),
        cell.workload,
      ).toBe(true);
      expect(results.problems, cell.workload).toEqual([]);
      expect(results.verdict, `${cell.workload}: ${JSON.stringify(results.checkers)}`.slice(0, 2000)).toBe(
        'ok',
      );
    }
  });
});
