import { sharedLockBackends } from '../backends/shared-locks.js';
import type { SuiteEntry } from './matrix.js';

type Cell = SuiteEntry['options'];

/**
 * The suite's cells for semaphores and read-write locks (issue #19), with what each predicts and why.
 * `quick` is a memory/Redis run's settings, `slow` a consensus store's. Cells of a backend appear once
 * the harness drives its shared locks (backends/shared-locks.ts): a ZooKeeper or etcd entry there brings
 * its cells here with it.
 *
 * - rwlock, fencing on, client pauses (and a killed server): `ok`. A holder paused in its window past its
 *   lease comes back to a resource that has seen a higher fence: a writer's write and a reader's read are
 *   refused, and its overlap with the next holder is the fence's to protect (excused past its lease).
 * - rwlock, fencing off, client pauses: `illegal`: the paused holder is inside with a writer.
 * - semaphore, client pauses: `illegal` by the resource's count, fencing on or off, while its
 *   `semaphore-lease` view is `ok`: the semaphore never has more than N grants believed valid, but a
 *   holder paused past its lease is one more inside, and a semaphore's fence cannot tell it from the N
 *   valid holders (core's README), so no resource can refuse it. Kleppmann's first diagram, with no remedy.
 * - semaphore, a killed Redis (no persistence): `ok`. The restarted server has forgotten every grant, but
 *   the fault is held 1.5–3 TTLs, so every lease believed before it has lapsed before the next grant.
 * - consensus stores, partitions and kills: `ok`: a cut-off holder's validity ends with its session.
 */
export function sharedLockCells(
  quick: Omit<Cell, 'backend' | 'workload'>,
  slow: Omit<Cell, 'backend' | 'workload'>,
): { options: Cell; expect: SuiteEntry['expect']; why: string }[] {
  const driven = new Set(sharedLockBackends());
  const cells: { options: Cell; expect: SuiteEntry['expect']; why: string }[] = [
    {
      options: { ...quick, backend: 'memory', workload: 'rwlock', fault: 'pause-client' },
      expect: 'ok',
      why: 'rwlock: the resource refuses a lapsed reader or writer by its fence',
    },
    {
      options: { ...quick, backend: 'memory', workload: 'semaphore', fault: 'pause-client' },
      expect: 'illegal',
      why: 'semaphore: a paused holder is one more inside; no fence can refuse it (beliefs stay ok)',
    },
    {
      options: { ...quick, backend: 'redis', workload: 'rwlock', fault: 'pause-client,kill' },
      expect: 'ok',
      why: 'rwlock on one Redis: lapsed holders refused by the fence, a kill outlasts every lease',
    },
    {
      options: { ...quick, backend: 'redis', workload: 'rwlock', fault: 'pause-client', fencing: false },
      expect: 'illegal',
      why: 'rwlock without fencing: a paused holder is inside with a writer',
    },
    {
      options: { ...quick, backend: 'redis', workload: 'semaphore', fault: 'pause-client' },
      expect: 'illegal',
      why: 'semaphore on one Redis: a paused holder is one more inside (beliefs stay ok)',
    },
    {
      options: { ...quick, backend: 'redis', workload: 'semaphore', fault: 'kill' },
      expect: 'ok',
      why: 'semaphore on one Redis: a kill outlasts every lease believed before it',
    },
  ];
  for (const backend of ['zk', 'etcd'] as const) {
    cells.push(
      {
        options: { ...slow, backend, workload: 'rwlock', fault: 'pause-client,partition,kill' },
        expect: 'ok',
        why: 'rwlock on consensus: fences refuse lapsed holders, a cut-off holder’s lease ends with its session',
      },
      {
        options: { ...slow, backend, workload: 'semaphore', fault: 'partition,kill' },
        expect: 'ok',
        why: 'semaphore on consensus: a cut-off holder’s lease ends with its session',
      },
    );
  }
  return cells.filter((cell) => driven.has(cell.options.backend));
}
