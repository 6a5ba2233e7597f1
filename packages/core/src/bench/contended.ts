import { jainIndex, percentile } from './stats.js';

/** Gives the lock back. */
export type Unlock = () => Promise<void>;

/** One client of one library, as the benchmarks drive it: blocking acquire with its own waiting. */
export interface BenchLocker {
  lock(resource: string): Promise<Unlock>;
}

export interface ContendedOptions {
  /** How long the clients compete. */
  readonly seconds: number;
  /** How long each holder keeps the lock (a timer, so about this long or a little more). */
  readonly holdMs: number;
}

export interface ContendedResult {
  grantsPerSecond: number;
  /** From the holder calling release to the next grant resolving in another client. */
  handoffP50Ms: number;
  handoffP99Ms: number;
  /** Every handoff measured, in ms, for callers that pool several blocks. */
  handoffs: number[];
  grantsPerClient: number[];
  /** Jain's index over `grantsPerClient`. */
  jain: number;
}

interface Grant {
  readonly client: number;
  readonly grantedAt: number;
  readonly releasingAt: number;
}

/**
 * All `lockers` compete for one resource for `seconds`, each holding it `holdMs` per grant. A
 * handoff is counted only between two different clients: a holder that re-acquires its own lock has
 * handed nothing over, and counting it would flatter libraries that let the last holder win again.
 */
export async function measureContended(
  lockers: readonly BenchLocker[],
  resource: string,
  options: ContendedOptions,
): Promise<ContendedResult> {
  const grants: Grant[] = [];
  const start = performance.now();
  const end = start + options.seconds * 1000;
  await Promise.all(
    lockers.map(async (locker, client) => {
      while (performance.now() < end) {
        const unlock = await locker.lock(resource);
        const grantedAt = performance.now();
        await new Promise((resolve) => setTimeout(resolve, options.holdMs));
        const releasingAt = performance.now();
        await unlock();
        grants.push({ client, grantedAt, releasingAt });
      }
    }),
  );
  const counted = grants.filter((g) => g.grantedAt < end).sort((a, b) => a.grantedAt - b.grantedAt);
  const handoffs: number[] = [];
  for (let i = 1; i < counted.length; i++) {
    const previous = counted[i - 1] as Grant;
    const next = counted[i] as Grant;
    if (next.client !== previous.client) handoffs.push(next.grantedAt - previous.releasingAt);
  }
  const grantsPerClient = lockers.map((_, c) => counted.filter((g) => g.client === c).length);
  return {
    grantsPerSecond: (counted.length * 1000) / (end - start),
    handoffP50Ms: percentile(handoffs, 0.5),
    handoffP99Ms: percentile(handoffs, 0.99),
    handoffs,
    grantsPerClient,
    jain: jainIndex(grantsPerClient),
  };
}
