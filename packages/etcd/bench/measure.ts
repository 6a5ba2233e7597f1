import type { Contender } from './contenders.js';

export interface Uncontended {
  /** acquire + release cycles per second, one client, back to back. */
  cyclesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface Contended {
  grantsPerSecond: number;
  /** From the holder starting its release to the next grant resolving in a waiting client. */
  handoffP50Ms: number;
  handoffP99Ms: number;
  /** Jain's fairness index over grants per client: 1 = even, 1/n = one client took everything. */
  jain: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

export function jainIndex(counts: readonly number[]): number {
  const sum = counts.reduce((a, b) => a + b, 0);
  const squares = counts.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? Number.NaN : (sum * sum) / (counts.length * squares);
}

/**
 * One client per contender locking and unlocking back to back, the contenders taking turns in short
 * slices for `seconds` each in total, so load from other processes on the machine hits them alike.
 */
export async function uncontended(
  contenders: readonly Contender[],
  endpoints: readonly string[],
  resource: string,
  seconds: number,
  sliceMs = 250,
): Promise<Map<Contender, Uncontended>> {
  const lockers = contenders.map((c) => c.open(endpoints));
  try {
    for (const locker of lockers) for (let i = 0; i < 50; i++) await (await locker.lock(resource))();
    const cycles = lockers.map((): number[] => []);
    const spent = lockers.map(() => 0);
    const slices = Math.ceil((seconds * 1000) / sliceMs);
    for (let slice = 0; slice < slices; slice++) {
      for (const [index, locker] of lockers.entries()) {
        const start = performance.now();
        const end = start + sliceMs;
        let now = start;
        while (now < end) {
          const unlock = await locker.lock(resource);
          await unlock();
          const done = performance.now();
          cycles[index]?.push(done - now);
          now = done;
        }
        spent[index] = (spent[index] ?? 0) + (now - start);
      }
    }
    return new Map(
      contenders.map((c, index) => {
        const mine = cycles[index] ?? [];
        return [
          c,
          {
            cyclesPerSecond: (mine.length * 1000) / (spent[index] ?? 1),
            p50Ms: percentile(mine, 0.5),
            p99Ms: percentile(mine, 0.99),
          },
        ];
      }),
    );
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
}

/** `clients` clients (each its own connection) taking turns on one resource, holding `holdMs`. */
export async function contended(
  contender: Contender,
  endpoints: readonly string[],
  resource: string,
  seconds: number,
  clients: number,
  holdMs: number,
): Promise<Contended> {
  const lockers = Array.from({ length: clients }, () => contender.open(endpoints));
  try {
    for (const locker of lockers) await (await locker.lock(resource))();
    const grants: { client: number; grantedAt: number; releasingAt: number }[] = [];
    const start = performance.now();
    const end = start + seconds * 1000;
    await Promise.all(
      lockers.map(async (locker, client) => {
        while (performance.now() < end) {
          const unlock = await locker.lock(resource);
          const grantedAt = performance.now();
          await sleep(holdMs);
          const releasingAt = performance.now();
          await unlock();
          grants.push({ client, grantedAt, releasingAt });
        }
      }),
    );
    const counted = grants.filter((g) => g.grantedAt < end).sort((a, b) => a.grantedAt - b.grantedAt);
    const handoffs: number[] = [];
    for (let i = 1; i < counted.length; i++) {
      const previous = counted[i - 1];
      const next = counted[i];
      if (previous && next) handoffs.push(next.grantedAt - previous.releasingAt);
    }
    const perClient = Array.from({ length: clients }, (_, c) => counted.filter((g) => g.client === c).length);
    return {
      grantsPerSecond: (counted.length * 1000) / (end - start),
      handoffP50Ms: percentile(handoffs, 0.5),
      handoffP99Ms: percentile(handoffs, 0.99),
      jain: jainIndex(perClient),
    };
  } finally {
    await Promise.all(lockers.map((l) => l.close()));
  }
}

/** Round-trip time of one linearizable read, the unit "within 3 round trips" is counted in. */
export async function roundTrip(
  read: () => Promise<unknown>,
  samples: number,
): Promise<{ p50Ms: number; p99Ms: number }> {
  for (let i = 0; i < 50; i++) await read();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await read();
    times.push(performance.now() - start);
  }
  return { p50Ms: percentile(times, 0.5), p99Ms: percentile(times, 0.99) };
}
