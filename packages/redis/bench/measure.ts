import type { Contender } from './contenders.js';

export interface Uncontended {
  /** acquire + release pairs per second, one client, serially. */
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface Contended {
  grantsPerSecond: number;
  /** From the holder calling release to the next grant resolving in another (or the same) client. */
  handoffP50Ms: number;
  handoffP99Ms: number;
  /** Jain's index over grants per client: 1 = perfectly even, 1/n = one client got everything. */
  jain: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function measureUncontended(
  contender: Contender,
  endpoints: readonly string[],
  resource: string,
  seconds: number,
): Promise<Uncontended> {
  const locker = contender.open(endpoints);
  try {
    for (let i = 0; i < 200; i++) await (await locker.lock(resource))();
    const latencies: number[] = [];
    const start = performance.now();
    const stopAt = start + seconds * 1000;
    for (let now = start; now < stopAt; ) {
      const unlock = await locker.lock(resource);
      await unlock();
      const end = performance.now();
      latencies.push(end - now);
      now = end;
    }
    const elapsed = performance.now() - start;
    return {
      opsPerSecond: (latencies.length / elapsed) * 1000,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
    };
  } finally {
    await locker.close();
  }
}

export async function measureContended(
  contender: Contender,
  endpoints: readonly string[],
  resource: string,
  seconds: number,
  clients: number,
  holdMs: number,
): Promise<Contended> {
  const lockers = Array.from({ length: clients }, () => contender.open(endpoints));
  try {
    // Warm every client's connections (and scripts) before the clock starts.
    for (const locker of lockers) await (await locker.lock(resource))();
    const grants: { client: number; grantedAt: number; releasedAt: number }[] = [];
    const start = performance.now();
    const stopAt = start + seconds * 1000;
    await Promise.all(
      lockers.map(async (locker, client) => {
        while (performance.now() < stopAt) {
          const unlock = await locker.lock(resource);
          const grantedAt = performance.now();
          await sleep(holdMs);
          const releasedAt = performance.now();
          await unlock();
          grants.push({ client, grantedAt, releasedAt });
        }
      }),
    );
    const inWindow = grants.filter((g) => g.grantedAt < stopAt).sort((a, b) => a.grantedAt - b.grantedAt);
    const handoffs: number[] = [];
    for (let i = 1; i < inWindow.length; i++) {
      const previous = inWindow[i - 1];
      const next = inWindow[i];
      if (previous && next) handoffs.push(next.grantedAt - previous.releasedAt);
    }
    const perClient = Array.from(
      { length: clients },
      (_, c) => inWindow.filter((g) => g.client === c).length,
    );
    return {
      grantsPerSecond: (inWindow.length / (stopAt - start)) * 1000,
      handoffP50Ms: percentile(handoffs, 0.5),
      handoffP99Ms: percentile(handoffs, 0.99),
      jain: jainIndex(perClient),
    };
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
}

export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

export function jainIndex(counts: readonly number[]): number {
  const sum = counts.reduce((a, b) => a + b, 0);
  const squares = counts.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 0 : (sum * sum) / (counts.length * squares);
}
