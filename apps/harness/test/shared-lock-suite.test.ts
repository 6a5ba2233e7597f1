import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { loadBackend } from '../src/backends/index.js';
import { sharedLockBackends } from '../src/backends/shared-locks.js';
import { buildTimeline } from '../src/report/timeline-data.js';
import { validateRun } from '../src/run/compatibility.js';
import { parseRunOptions } from '../src/run/options.js';
import { suiteMatrix } from '../src/suite/matrix.js';
import { sharedLockCells } from '../src/suite/shared-lock-cells.js';

describe('shared-lock workloads in the suite and the run checks', () => {
  it('lists cells only for backends the harness drives shared locks on, each a valid run', async () => {
    expect(sharedLockBackends().sort()).toEqual(['etcd', 'memory', 'redis', 'zk']);
    const cells = sharedLockCells({ clients: 4, time: '5s', seed: 7 }, { clients: 4, time: '12s', seed: 7 });
    expect(new Set(cells.map((c) => c.options.backend))).toEqual(new Set(['memory', 'redis', 'zk', 'etcd']));
    expect(new Set(cells.map((c) => c.options.workload))).toEqual(new Set(['semaphore', 'rwlock']));
    for (const cell of cells) {
      const options = parseRunOptions({ ...cell.options, out: '/tmp/unused', provider: 'local' });
      expect(() => validateRun(options, factories[options.backend]!), cell.why).not.toThrow();
    }
    const short = suiteMatrix(true, 1).filter((e) => e.options.workload === 'semaphore');
    expect(short.map((e) => [e.options.backend, e.options.fault, e.expect])).toEqual([
      ['memory', 'pause-client', 'illegal'],
      ['redis', 'pause-client', 'illegal'],
      ['redis', 'kill', 'ok'],
      ['zk', 'partition,kill', 'ok'],
      ['etcd', 'partition,kill', 'ok'],
    ]);
  });

  it('refuses a shared-lock workload on a backend without shared locks, naming those that have them', () => {
    const options = parseRunOptions({
      backend: 'redlock',
      workload: 'rwlock',
      out: '/tmp/unused',
      fencing: false,
    });
    expect(() => validateRun(options, factories.redlock!)).toThrow(
      /rwlock workload needs semaphores and read-write locks, which the harness drives on memory, redis, zk, etcd/,
    );
  });

  it('labels each believed hold with its permits or mode', () => {
    const event = (index: number, time: number, process: number, type: string, value: unknown) =>
      ({ index, time, process, type, f: 'acquire', value }) as HistoryEvent;
    const grant = (g: string, extra: Record<string, unknown>) => ({
      grant: g,
      resource: 'r',
      fence: '3',
      validUntil: '900',
      at: '100',
      ...extra,
    });
    const history = [
      event(0, 90, 0, 'invoke', { resource: 'r' }),
      event(1, 100, 0, 'ok', grant('c0.1', { permits: 2, limit: 3 })),
      event(2, 95, 1, 'invoke', { resource: 'r' }),
      event(3, 110, 1, 'ok', grant('c1.1', { mode: 'write' })),
    ];
    const labels = buildTimeline(history, 2).holds.map((h) => h.label);
    expect(labels).toEqual([
      'fence 3, 2 of 3 permits (c0.1, ended: expired)',
      'fence 3, write (c1.1, ended: expired)',
    ]);
  });
});

const factories = Object.fromEntries(
  await Promise.all(
    (['memory', 'redis', 'redlock', 'zk', 'etcd'] as const).map(
      async (name) => [name, await loadBackend(name)] as const,
    ),
  ),
);
