import { ZkLockClient } from '@fencekit/zk';
import { percentile } from './stats.js';

export interface Cycle {
  /** Run one cycle (e.g. acquire + release); resolves when it is done. */
  once(): Promise<void>;
  close(): Promise<void>;
}

export interface UncontendedResult {
  cyclesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  samples: number;
}

/**
 * Back-to-back cycles of several contenders, interleaved: `rounds` rounds, each running every
 * contender for `blockMs` in turn (order alternating). On a shared, busy machine this spreads the
 * background load evenly over the contenders, so their ratio means something.
 */
export async function runInterleaved(
  contenders: Record<string, Cycle>,
  rounds: number,
  blockMs: number,
): Promise<Record<string, UncontendedResult>> {
  const names = Object.keys(contenders);
  const durations = new Map(names.map((n) => [n, [] as number[]]));
  const elapsed = new Map(names.map((n) => [n, 0]));
  try {
    for (const name of names) for (let i = 0; i < 200; i++) await contenders[name]!.once();
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const name of order) {
        const cycle = contenders[name]!;
        const start = performance.now();
        let last = start;
        while (last - start < blockMs) {
          await cycle.once();
          const now = performance.now();
          durations.get(name)!.push(now - last);
          last = now;
        }
        elapsed.set(name, elapsed.get(name)! + (last - start));
      }
    }
  } finally {
    await Promise.all(names.map((n) => contenders[n]!.close()));
  }
  const results: Record<string, UncontendedResult> = {};
  for (const name of names) {
    const samples = durations.get(name)!;
    results[name] = {
      cyclesPerSecond: (samples.length * 1000) / elapsed.get(name)!,
      p50Ms: percentile(samples, 0.5),
      p99Ms: percentile(samples, 0.99),
      samples: samples.length,
    };
  }
  return results;
}

export interface ContendedResult {
  grantsPerSecond: number;
  handoffP50Ms: number;
  handoffP99Ms: number;
  grantsPerClient: number[];
}

/**
 * `clients` lock clients (each its own ZooKeeper session) taking turns on one resource for `seconds`.
 * Handoff = from the holder calling release() to the next holder's acquire() resolving.
 */
export async function runContended(
  servers: string,
  resource: string,
  clients: number,
  seconds: number,
  holdMs: number,
): Promise<ContendedResult> {
  const lockers = Array.from(
    { length: clients },
    () => new ZkLockClient({ servers, sessionTimeoutMs: 10_000 }),
  );
  const grants: { client: number; grantedAt: number; releasedAt: number }[] = [];
  try {
    for (const locker of lockers) await (await locker.acquire(resource, { ttlMs: 30_000 })).release();
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      lockers.map(async (locker, client) => {
        while (performance.now() < end) {
          const lease = await locker.acquire(resource, { ttlMs: 30_000, waitMs: 30_000 });
          const grantedAt = performance.now();
          if (holdMs > 0) await new Promise((r) => setTimeout(r, holdMs));
          const releasedAt = performance.now();
          grants.push({ client, grantedAt, releasedAt });
          await lease.release();
        }
      }),
    );
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
  grants.sort((a, b) => a.grantedAt - b.grantedAt);
  const handoffs: number[] = [];
  for (let i = 1; i < grants.length; i++) {
    const previous = grants[i - 1]!;
    const next = grants[i]!;
    if (next.client !== previous.client) handoffs.push(next.grantedAt - previous.releasedAt);
  }
  const first = grants[0]?.grantedAt ?? 0;
  const last = grants.at(-1)?.grantedAt ?? 0;
  return {
    grantsPerSecond: ((grants.length - 1) * 1000) / Math.max(1, last - first),
    handoffP50Ms: percentile(handoffs, 0.5),
    handoffP99Ms: percentile(handoffs, 0.99),
    grantsPerClient: lockers.map((_, client) => grants.filter((g) => g.client === client).length),
  };
}
