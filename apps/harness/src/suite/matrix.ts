import { BACKENDS, type BackendName } from '../backends/types.js';
import { FAULT_NAMES } from '../nemesis/faults.js';
import { OptionsError, type RunOptionsInput } from '../run/options.js';
import { sharedLockCells } from './shared-lock-cells.js';

/** One cell of the suite, with the verdict the seed's argument predicts for it. */
export interface SuiteEntry {
  options: Omit<RunOptionsInput, 'out' | 'provider'> & { backend: BackendName };
  /**
   * What the argument predicts; the suite reports agreement, CI asserts it. A verdict, `report` (measured, not
   * predicted), or `fences-ok`: the fences checker alone is `ok` (no fence granted twice, no stale write), whatever
   * the lease and mutex checks say of the lock (agreement.ts).
   */
  expect: 'ok' | 'illegal' | 'report' | 'fences-ok';
  why: string;
}

/** The faults aimed at the lease promise, together in one cell per backend. */
const AIMED_AT_THE_LEASE = 'stall-holder,flicker,suspend,hang-at-close';

const e = (options: SuiteEntry['options'], expect: SuiteEntry['expect'], why: string): SuiteEntry => ({
  options,
  expect,
  why,
});

/**
 * The measured version of the seed's closing table. `short` keeps each run to a few seconds so the
 * whole matrix fits in minutes on two cores; the full suite runs longer with more clients and seeds.
 * The seeds are `firstSeed`, `firstSeed + 1`, … (`suite --seed`, default 7).
 */
export function suiteMatrix(short: boolean, seeds = short ? 1 : 3, firstSeed = FIRST_SEED): SuiteEntry[] {
  // Consensus stores need longer runs: their TTL floor (1–2 s) sets how long each fault is held.
  const quick = short ? '5s' : '30s';
  const slow = short ? '12s' : '60s';
  // Each aimed fault takes a wait for its moment and more than a session: 20 s hold two or three.
  const aimed = short ? '20s' : '60s';
  const clients = short ? 4 : 8;
  const entries: SuiteEntry[] = [];
  for (let s = 0; s < seeds; s++) {
    const q = { clients, time: quick, seed: firstSeed + s };
    const l = { clients, time: slow, seed: firstSeed + s };
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
      // Faults aimed at the lease promise (issue #13): each on the backends whose promise it tests.
      e(
        { ...l, time: aimed, backend: 'zk', workload: 'inventory', fault: AIMED_AT_THE_LEASE },
        'ok',
        'a holder stalled past its session, outages on releases, suspensions, a hung node at close',
      ),
      e(
        { ...l, time: aimed, backend: 'etcd', workload: 'inventory', fault: AIMED_AT_THE_LEASE },
        'ok',
        'a holder stalled past its lease, outages on releases, suspensions, a hung node at close',
      ),
      e(
        { ...q, backend: 'redlock', workload: 'mutex', fault: 'hang-at-close', fencing: false },
        'ok',
        'close() bounded while a node hangs',
      ),
      e(
        { ...q, backend: 'redis', workload: 'inventory', fault: 'flicker' },
        'report',
        'a Redis restarted without persistence counts fences from 1 again: convicted for the reused fence when a kill lands, the resource refuses them',
      ),
    );
    // Semaphores and read-write locks (issue #19): see shared-lock-cells.ts for each prediction.
    entries.push(...sharedLockCells(q, l).map((c) => e(c.options, c.expect, c.why)));
    if (!short) entries.push(...replicatedRedis(firstSeed + s));
  }
  return entries;
}

/**
 * Redis as people deploy it (issue #17): asynchronous replicas behind Sentinel or in Redis Cluster, promoted by
 * `failover-lagged` or a `split-brain`. A group of its own, in the full suite only: each run starts six servers and
 * holds each fault for seconds of promotion, too slow for `--short` and CI. The failover cells use `failover-lagged`:
 * on loopback a replica applies the stream within a millisecond, so a plain `failover` (graceful or kill) almost
 * never loses a grant (redis-cluster mutex: 0 of 5 seeds convicted), while in production replication lag is what
 * loses them; the lagged one cuts the replication links for 1 s before the kill. Predictions from the runs in the README:
 * - the unfenced mutex: two holders (or fences reissued and accepted), convicted;
 * - the fenced inventory: the counter rolls back and fences are granted twice, which breaks the lock's promise of
 *   a fresh, higher fence per grant: convicted by the fences checker (`reissued`). The resource remembers the
 *   highest fence it accepted and refuses every reused one, so no stale write lands: the run page says so beside
 *   the conviction (the finding, "fencing held"). Fencing protects the resource; the lock alone is not safe;
 * - epoch fences: `fences-ok`: no fence reused, so no stale write accepted; the lock itself can still be held twice
 *   (a split brain's two primaries both grant, the lease check convicts that), only the fence saves the resource;
 * - `replicas: { count: 1 }` (WAIT) on the unfenced mutex: measured, not assumed (`report`): WAIT narrows the
 *   window, it does not make a failover safe.
 */
function replicatedRedis(seed: number): SuiteEntry[] {
  const r = { clients: 5, time: '30s', seed };
  return (['redis-sentinel', 'redis-cluster'] as const).flatMap((topology) => [
    e(
      { ...r, backend: topology, workload: 'mutex', fault: 'failover-lagged', fencing: false },
      'illegal',
      'a promoted replica never saw the last grants: two holders',
    ),
    e(
      { ...r, backend: topology, workload: 'inventory', fault: 'failover-lagged' },
      'illegal',
      'the counter rolls back: a fence reused for a second grant (reissued), though the resource refuses it',
    ),
    e(
      { ...r, backend: topology, workload: 'inventory', fault: 'split-brain' },
      'illegal',
      'two primaries grant the same fences: a fence reused (reissued), though the resource refuses the stale ones',
    ),
    e(
      // 60 s: two faults, each heal waiting (bounded) for the deployment to be whole again; in 30 s at load 30 the
      // failover's heal took the split brain's slot (never applied, the run unknown: 2 of 2 on 2026-12-03).
      {
        ...r,
        time: '60s',
        backend: `${topology}-epoch`,
        workload: 'inventory',
        fault: 'failover-lagged,split-brain',
      },
      'fences-ok',
      'epoch fences: no fence reused and no stale write accepted, the lock may still be held twice',
    ),
    e(
      { ...r, backend: `${topology}-wait`, workload: 'mutex', fault: 'failover-lagged', fencing: false },
      'report',
      'WAIT for one replica after each grant: the conviction rate measured, not assumed to be zero',
    ),
  ]);
}

/** The suite's first seed unless `--seed` says otherwise. */
export const FIRST_SEED = 7;

/**
 * `suite --seeds` (and `mutants --seeds`): a whole number of seeds per cell (the default: 1 short, 3
 * full). Decimal digits only: `Number` would take "", " ", "0x3" and "1e2".
 */
export function parseSeeds(text: string | undefined, option = '--seeds'): number | undefined {
  if (text === undefined) return undefined;
  const seeds = Number(text);
  if (!/^\d+$/.test(text) || seeds < 1 || seeds > 1_000) {
    throw new OptionsError(`${option}: a whole number from 1 to 1000, got "${text}"`);
  }
  return seeds;
}

/** `suite --seed`: the first seed of every cell (decimal digits, at most 2^31 - 1). */
export function parseFirstSeed(text: string | undefined): number {
  if (text === undefined) return FIRST_SEED;
  const seed = Number(text);
  if (!/^\d+$/.test(text) || seed > 2 ** 31 - 1) {
    throw new OptionsError(`--seed: a whole number from 0 to 2147483647, got "${text}"`);
  }
  return seed;
}

/** `--provider` of `suite` and `mutants` (`run` checks it with the other run options); only `suite` takes ssh. */
export function parseProvider(text: string): 'auto' | 'local' | 'docker';
export function parseProvider(text: string, options: { ssh: true }): 'auto' | 'local' | 'docker' | 'ssh';
export function parseProvider(text: string, options?: { ssh: true }): 'auto' | 'local' | 'docker' | 'ssh' {
  if (text === 'auto' || text === 'local' || text === 'docker') return text;
  if (options?.ssh && text === 'ssh') return text;
  throw new OptionsError(
    `--provider: auto, local or docker${options?.ssh ? ', or ssh (with --nodes)' : ''}, got "${text}"`,
  );
}

/**
 * `suite --provider ssh`: one cell per consensus backend, under the server faults the ssh provider applies on the
 * nodes (partition, kill, pause), predicted ok like the same cells on the other providers.
 */
export function sshMatrix(short: boolean, seeds = 1, firstSeed = FIRST_SEED): SuiteEntry[] {
  const entries: SuiteEntry[] = [];
  for (let s = 0; s < seeds; s++) {
    for (const backend of ['etcd', 'zk'] as const) {
      entries.push(
        e(
          {
            clients: short ? 4 : 8,
            time: short ? '15s' : '60s',
            seed: firstSeed + s,
            backend,
            workload: 'inventory',
            fault: 'partition,kill,pause-server',
          },
          'ok',
          'consensus + fence, servers on ssh nodes',
        ),
      );
    }
  }
  return entries;
}

/**
 * `suite --backends` and `--faults`: the entries on those backends whose faults include one of those
 * (comma-separated lists; an unknown name is refused, naming the known ones).
 */
export function selectEntries(
  entries: readonly SuiteEntry[],
  only: { backends?: string | undefined; faults?: string | undefined },
): SuiteEntry[] {
  const list = (text: string, known: readonly string[], what: string) => {
    const names = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = names.filter((n) => !known.includes(n));
    if (unknown.length)
      throw new OptionsError(`unknown ${what} ${unknown.join(', ')}; known: ${known.join(', ')}`);
    return names;
  };
  let selected = [...entries];
  if (only.backends) {
    const backends = list(only.backends, BACKENDS, 'backend');
    selected = selected.filter((x) => backends.includes(x.options.backend));
  }
  if (only.faults) {
    const faults = list(only.faults, FAULT_NAMES, 'fault');
    selected = selected.filter((x) =>
      String(x.options.fault ?? '')
        .split(',')
        .some((f) => faults.includes(f.trim())),
    );
  }
  return selected;
}
