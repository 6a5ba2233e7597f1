import type { BenchLocker } from './contended.js';
import { jainIndex, percentile } from './stats.js';

export interface ContendedPermitsOptions {
  /** How long the clients compete. */
  readonly seconds: number;
  /** How long each holder keeps its permit (a timer, so about this long or a little more). */
  readonly holdMs: number;
  /** How many holders the semaphore admits at once (what every locker was opened with). */
  readonly permits: number;
}

export interface ContendedPermitsResult {
  grantsPerSecond: number;
  /** From a holder calling release to the next grant of a client that was already waiting then. */
  handoffP50Ms: number;
  handoffP99Ms: number;
  /** Every handoff measured, in ms, for callers that pool several rounds. */
  handoffs: number[];
  /**
   * Grants that went to a client ahead of another that had asked before it and got its own grant
   * more than one hold (`holdMs`) later: about 0 for a strictly FIFO semaphore (closer calls are the
   * order in which one process happened to send and read them, not the semaphore's), most grants
   * for one whose releasing holder takes a permit straight back.
   */
  overtakes: number;
  grantsPerClient: number[];
  /** Jain's index over `grantsPerClient`. */
  jain: number;
}

interface Grant {
  readonly client: number;
  readonly askedAt: number;
  readonly grantedAt: number;
  readonly releasingAt: number;
}

/**
 * All `lockers` compete for one semaphore of `permits` for `seconds`, each holding a permit `holdMs`
 * per grant: the ring of `measureContended`, for N holders at a time.
 *
 * A handoff is timed from a release to the next grant of a client that was already waiting at that
 * release (issue #19's definition); a release that found nobody waiting times nothing. So a
 * semaphore that hands the freed permit to a waiter at once scores its wake-up path; one whose
 * releasing holder takes the permit straight back (a polling semaphore's waiters sleep, the holder
 * does not) scores the time until a waiting client finally gets one.
 */
export async function measureContendedPermits(
  lockers: readonly BenchLocker[],
  resource: string,
  options: ContendedPermitsOptions,
): Promise<ContendedPermitsResult> {
  const grants: Grant[] = [];
  const start = performance.now();
  const end = start + options.seconds * 1000;
  await Promise.all(
    lockers.map(async (locker, client) => {
      while (performance.now() < end) {
        const askedAt = performance.now();
        const unlock = await locker.lock(resource);
        const grantedAt = performance.now();
        await new Promise((resolve) => setTimeout(resolve, options.holdMs));
        const releasingAt = performance.now();
        await unlock();
        grants.push({ client, askedAt, grantedAt, releasingAt });
      }
    }),
  );
  const counted = grants.filter((g) => g.grantedAt < end).sort((a, b) => a.grantedAt - b.grantedAt);
  const grantsPerClient = lockers.map((_, c) => counted.filter((g) => g.client === c).length);
  return {
    grantsPerSecond: (counted.length * 1000) / (end - start),
    ...handoffsOf(grants, end),
    overtakes: overtakesOf(grants, end, options.holdMs),
    grantsPerClient,
    jain: jainIndex(grantsPerClient),
  };
}

/**
 * Each release before `end` is timed to the first grant after it to a client that was already
 * waiting then, among all grants: a client kept waiting past the end by holders that took the
 * permit back is timed until it got it. Releases are not paired one to one with grants: a pairing
 * is a guess from outside, and one wrong guess (a permit that went to a newcomer while the queue
 * was briefly empty) would shift every later pair by one grant.
 */
function handoffsOf(
  grants: readonly Grant[],
  end: number,
): { handoffs: number[]; handoffP50Ms: number; handoffP99Ms: number } {
  const byGrant = [...grants].sort((a, b) => a.grantedAt - b.grantedAt);
  const releases = byGrant.map((g) => g.releasingAt).filter((t) => t < end);
  releases.sort((a, b) => a - b);
  const handoffs: number[] = [];
  // The first grant after the current release: releases only move forward, so does this.
  let after = 0;
  for (const release of releases) {
    while (after < byGrant.length && (byGrant[after] as Grant).grantedAt <= release) after++;
    for (let i = after; i < byGrant.length; i++) {
      const grant = byGrant[i] as Grant;
      if (grant.askedAt <= release) {
        handoffs.push(grant.grantedAt - release);
        break;
      }
    }
  }
  return { handoffs, handoffP50Ms: percentile(handoffs, 0.5), handoffP99Ms: percentile(handoffs, 0.99) };
}

/**
 * Counted grants (before `end`) that came more than `slackMs` before the grant of a client that had
 * asked earlier. All grants are looked at: a client starved until the end is overtaken by every
 * grant meanwhile.
 */
function overtakesOf(grants: readonly Grant[], end: number, slackMs: number): number {
  const byAsking = [...grants].sort((a, b) => a.askedAt - b.askedAt);
  let latestEarlier = Number.NEGATIVE_INFINITY;
  let overtakes = 0;
  for (const grant of byAsking) {
    if (latestEarlier > grant.grantedAt + slackMs && grant.grantedAt < end) overtakes += 1;
    latestEarlier = Math.max(latestEarlier, grant.grantedAt);
  }
  return overtakes;
}
