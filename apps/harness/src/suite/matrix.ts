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
  // Consensus stores need longer runs: their TTL floor (1–2 s) sets how long each fault is held.
  const quick = short ? '5s' : '30s';
  const slow = short ? '12s' : '60s';
  const clients = short ? 4 : 8;
  const entries: SuiteEntry[] = [];
  for (let s = 0; s < seeds; s++) {
    const q = { clients, time: quick, seed: 7 + s };
    const l = { clients, time: slow, seed: 7 + s };
    entries.push(
      e(
        { ...q, backend: 'memory', workload: 'inventory', fault: 'none' },
        'ok',
        'no faults, one lock server',
      ),
      e(
        { ...q, backend: 'memory', workload: 'inventory', scenario: 'gc-pause', fencing: false },
        'illegal',
        'a paused holder outlives its TTL and writes stale',
      ),
      e(
        { ...q, backend: 'memory', workload: 'inventory', scenario: 'gc-pause' },
        'ok',
        'the resource refuses the stale fence',
      ),
      e(
        { ...q, backend: 'memory', workload: 'cas', fault: 'pause-client' },
        'ok',
        'lock-free baseline: the version check at the resource',
      ),
      e(
        { ...q, backend: 'memory', workload: 'cron', fault: 'pause-client' },
        'report',
        'cron: duplicates from late workers',
      ),
      e(
        { ...q, backend: 'redis', workload: 'inventory', scenario: 'gc-pause', fencing: false },
        'illegal',
        "Kleppmann's first diagram: pause past the TTL",
      ),
      e(
        { ...q, backend: 'redis', workload: 'inventory', scenario: 'gc-pause' },
        'ok',
        'the same, with the fence checked at the resource',
      ),
      e(
        { ...q, backend: 'redis', workload: 'mutex', fault: 'pause-client,pause-server', fencing: false },
        'illegal',
        'overlapping critical sections',
      ),
      e(
        { ...q, backend: 'redis', workload: 'cron', fault: 'pause-client,clock-jump' },
        'report',
        'cron: a lock for efficiency',
      ),
      e(
        {
          ...l,
          // One scripted pass convicts (see the clock-jump scenario); 10 s leave room for a slow one.
          time: short ? '10s' : '60s',
          backend: 'redlock',
          workload: 'inventory',
          scenario: 'clock-jump',
          fencing: false,
        },
        'illegal',
        "Kleppmann's second diagram: clock jump on one node",
      ),
      e(
        {
          ...l,
          backend: 'redlock',
          workload: 'mutex',
          fault: 'kill,pause-server,pause-client',
          fencing: false,
        },
        'report',
        'Redlock under crashes and pauses',
      ),
      e(
        { ...q, backend: 'redlock', workload: 'cron', fault: 'pause-client' },
        'report',
        'cron: a lock for efficiency',
      ),
      e(
        { ...l, backend: 'zk', workload: 'inventory', fault: 'pause-client,isolate,kill' },
        'ok',
        'consensus + fence',
      ),
      e(
        { ...l, backend: 'zk', workload: 'election', fault: 'pause-client,partition' },
        'ok',
        'term-stamped claims',
      ),
      e(
        { ...q, backend: 'zk', workload: 'cron', fault: 'pause-client' },
        'report',
        'cron: a lock for efficiency',
      ),
      e(
        { ...l, backend: 'etcd', workload: 'inventory', fault: 'pause-client,isolate,kill' },
        'ok',
        'consensus + fence',
      ),
      e(
        { ...l, backend: 'etcd', workload: 'election', fault: 'pause-client,partition' },
        'ok',
        'term-stamped claims',
      ),
      e(
        { ...q, backend: 'etcd', workload: 'cron', fault: 'pause-client' },
        'report',
        'cron: a lock for efficiency',
      ),
    );
  }
  return entries;
}
