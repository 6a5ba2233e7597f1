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
  /** Runs once per round after the contenders (the contended ring), under the same conditions. */
  alsoEachRound: () => Promise<void> = async () => {},
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
      await alsoEachRound();
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

interface Grant {
  client: number;
  grantedAt: number;
  releasedAt: number;
}

/**
 * `clients` lock clients (each its own ZooKeeper session) taking turns on one resource, in blocks of
 * `blockMs` that the caller interleaves with other measurements (`block()`), then `result()`.
 * Handoff = from the holder calling release() to the next holder's acquire() resolving.
 */
export class ContendedRing {
  readonly #lockers: ZkLockClient[];
  readonly #grants: Grant[] = [];
  readonly #handoffs: number[] = [];
  #grantedMs = 0;

  constructor(
    servers: string,
    private readonly resource: string,
    clients: number,
    private readonly holdMs: number,
  ) {
    this.#lockers = Array.from(
      { length: clients },
      () => new ZkLockClient({ servers, sessionTimeoutMs: 10_000 }),
    );
  }

  async block(blockMs: number): Promise<void> {
    const end = performance.now() + blockMs;
    const grants: Grant[] = [];
    await Promise.all(
      this.#lockers.map(async (locker, client) => {
        while (performance.now() < end) {
          const lease = await locker.acquire(this.resource, { ttlMs: 30_000, waitMs: 30_000 });
          const grantedAt = performance.now();
          if (this.holdMs > 0) await new Promise((r) => setTimeout(r, this.holdMs));
          grants.push({ client, grantedAt, releasedAt: performance.now() });
          await lease.release();
        }
      }),
    );
    grants.sort((a, b) => a.grantedAt - b.grantedAt);
    for (let i = 1; i < grants.length; i++) {
      const previous = grants[i - 1]!;
      const next = grants[i]!;
      if (next.client !== previous.client) this.#handoffs.push(next.grantedAt - previous.releasedAt);
    }
    this.#grantedMs += (grants.at(-1)?.grantedAt ?? 0) - (grants[0]?.grantedAt ?? 0);
    this.#grants.push(...grants);
  }

  result(): ContendedResult {
    return {
      grantsPerSecond: (this.#grants.length * 1000) / Math.max(1, this.#grantedMs),
      handoffP50Ms: percentile(this.#handoffs, 0.5),
      handoffP99Ms: percentile(this.#handoffs, 0.99),
      grantsPerClient: this.#lockers.map(
        (_, client) => this.#grants.filter((g) => g.client === client).length,
      ),
    };
  }

  close(): Promise<unknown> {
    return Promise.all(this.#lockers.map((l) => l.close()));
  }
}
