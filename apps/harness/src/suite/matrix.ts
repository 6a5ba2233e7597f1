import type { BackendName } from '../backends/types.js';
import type { RunOptionsInput } from '../run/options.js';

/** One cell of the suite, with the verdict the seed's argument predicts for it. */
export interface SuiteEntry {
  options: Omit<RunOptionsInput, 'out' | 'provider'> & { backend: BackendName };
  /** What the argument predicts; the suite reports agreement, CI asserts it. */
  expect: 'ok' | 'illegal' | 'report';
  why: string;
}

const e = (options: SuiteEntry['options'], expect: SuiteEntry['expect'], why: string): SuiteEntry => ({
  options,
  expect,
  why,
});

/**
 * The measured version of the seed's closing table. `short` keeps each run to a few seconds so the
 * whole matrix fits in minutes on two cores; the full suite runs longer with more clients and seeds.
 */
export function suiteMatrix(short: boolean, seeds = short ? 1 : 3): SuiteEntry[] {
  const time = short ? '6s' : '30s';
  const clients = short ? 4 : 8;
  const base = { clients, time };
  const entries: SuiteEntry[] = [];
  for (let s = 0; s < seeds; s++) {
    const seed = 7 + s;
    const c = { ...base, seed };
    entries.push(
      e(
        { ...c, backend: 'memory', workload: 'inventory', fault: 'none' },
        'ok',
        'no faults, one lock server',
      ),
      e(
        { ...c, backend: 'memory', workload: 'inventory', fault: 'pause-client', fencing: false },
        'illegal',
        'a paused holder outlives its TTL and writes stale',
      ),
      e(
        { ...c, backend: 'memory', workload: 'inventory', fault: 'pause-client' },
        'ok',
        'the resource refuses the stale fence',
      ),
      e(
        { ...c, backend: 'memory', workload: 'cas', fault: 'pause-client' },
        'ok',
        'lock-free baseline: the version check at the resource',
      ),
      e(
        { ...c, backend: 'memory', workload: 'cron', fault: 'pause-client' },
        'report',
        'duplicates from late workers',
      ),
      e(
        { ...c, backend: 'redis', workload: 'inventory', scenario: 'gc-pause', fencing: false },
        'illegal',
        "Kleppmann's first diagram",
      ),
      e(
        { ...c, backend: 'redis', workload: 'inventory', scenario: 'gc-pause' },
        'ok',
        'same, with the fence checked at the resource',
      ),
      e(
        { ...c, backend: 'redis', workload: 'mutex', fault: 'pause-client,pause-server', fencing: false },
        'illegal',
        'overlapping critical sections',
      ),
      e(
        { ...c, backend: 'redis', workload: 'cron', fault: 'pause-client,clock-jump' },
        'report',
        'a lock for efficiency',
      ),
      e(
        { ...c, backend: 'redlock', workload: 'inventory', scenario: 'clock-jump', fencing: false },
        'illegal',
        "Kleppmann's second diagram",
      ),
      e(
        { ...c, backend: 'redlock', workload: 'mutex', fault: 'kill,pause-server', fencing: false },
        'report',
        'Redlock under crashes',
      ),
      e(
        { ...c, backend: 'redlock', workload: 'cron', fault: 'pause-client' },
        'report',
        'a lock for efficiency',
      ),
      e(
        { ...c, backend: 'zk', workload: 'inventory', fault: 'pause-client,isolate,kill' },
        'ok',
        'consensus + fence',
      ),
      e(
        { ...c, backend: 'zk', workload: 'election', fault: 'pause-client,partition' },
        'ok',
        'term-stamped claims',
      ),
      e({ ...c, backend: 'zk', workload: 'cron', fault: 'pause-client' }, 'report', 'a lock for efficiency'),
      e(
        { ...c, backend: 'etcd', workload: 'inventory', fault: 'pause-client,isolate,kill' },
        'ok',
        'consensus + fence',
      ),
      e(
        { ...c, backend: 'etcd', workload: 'election', fault: 'pause-client,partition' },
        'ok',
        'term-stamped claims',
      ),
      e(
        { ...c, backend: 'etcd', workload: 'cron', fault: 'pause-client' },
        'report',
        'a lock for efficiency',
      ),
    );
  }
  return entries;
}
