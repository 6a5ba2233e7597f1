import { InvalidArgumentError, sleep } from '@fencekit/core';
import { describeRoles, type RedisReplication } from '../replication.js';
import { checkNodeId } from './arguments.js';
import type { Look, Observation } from './effects.js';

/** The faults that promote a Redis replica, and what their probe reads: roles, not the nemesis' bookkeeping. */
export type PromotionFaultName = 'failover' | 'splitBrain';

export interface PromotionQuery {
  readonly fault: PromotionFaultName;
  /** The primary the fault acted on (`from` in what `failover`/`splitBrain` resolved with). */
  readonly node: string;
  /**
   * `started`: a replica of `node`'s shard is primary now, by its own INFO and by the authority (a majority of the
   * Sentinels / of the cluster nodes' views); for `splitBrain` also `node` still calls itself primary (two
   * primaries at once). `healed`: the deployment serves as set up again and `node` is a replica.
   */
  readonly phase: 'started' | 'healed';
  /** Bound on the wait (default 20 s: a failover takes detection, an election and the promotion). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export const PROMOTION_FAULTS: readonly string[] = ['failover', 'splitBrain'];

export function isPromotionQuery(query: unknown): query is PromotionQuery {
  return (
    typeof query === 'object' &&
    query !== null &&
    PROMOTION_FAULTS.includes(String((query as { fault?: unknown }).fault))
  );
}

export function checkPromotionQuery(query: PromotionQuery): void {
  checkNodeId(query.node);
  if (query.phase !== 'started' && query.phase !== 'healed') {
    throw new InvalidArgumentError('observe.phase', query.phase, "'started' or 'healed'");
  }
  const { timeoutMs = 20_000 } = query;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 600_000) {
    throw new InvalidArgumentError(
      'observe.timeoutMs',
      timeoutMs,
      'a positive number of milliseconds, at most 10 minutes',
    );
  }
}

/**
 * Probes of a promotion, read from the servers: each member's INFO replication and the authority on who is primary.
 * `shard` is the members of `node`'s shard when the fault was applied (the primary and its replicas).
 */
export async function observePromotion(
  replication: RedisReplication,
  query: PromotionQuery,
  shard: readonly string[],
): Promise<Observation> {
  const started = performance.now();
  const timeoutMs = query.timeoutMs ?? 20_000;
  const wanted = query.phase === 'started';
  let last: Look = { effect: !wanted, detail: 'not probed' };
  for (;;) {
    query.signal?.throwIfAborted();
    last = await look(replication, query, shard).catch((error: Error) => ({
      effect: !wanted,
      detail: `probe failed: ${error.message}`,
    }));
    const afterMs = Math.round(performance.now() - started);
    if (last.effect === wanted) return { seen: true, detail: last.detail, afterMs };
    if (afterMs >= timeoutMs) return { seen: false, detail: last.detail, afterMs };
    await sleep(Math.min(200, timeoutMs - afterMs), query.signal);
  }
}

async function look(
  replication: RedisReplication,
  query: PromotionQuery,
  shard: readonly string[],
): Promise<Look> {
  const from = query.node;
  if (query.phase === 'healed') {
    const [whole, roles] = await Promise.all([replication.whole(), replication.roles()]);
    const demoted = roles.find((r) => r.id === from)?.role === 'slave';
    // Effect gone = whole again with the old primary a replica.
    return {
      effect: !(whole.whole && demoted),
      detail: `${whole.whole ? 'serving as set up' : 'not whole'}, ${from} ${demoted ? 'is a replica' : 'is not a replica'}: ${whole.detail}`,
    };
  }
  const [roles, primaries] = await Promise.all([replication.roles(), replication.primaries()]);
  const promoted = roles.find(
    (r) => r.id !== from && shard.includes(r.id) && r.role === 'master' && primaries.includes(r.id),
  );
  const oldSays = roles.find((r) => r.id === from)?.role;
  const detail = `${describeRoles(roles)}; the ${replication.kind === 'sentinel' ? "Sentinels' majority names" : "nodes' majority view has"} primaries: ${primaries.join(', ') || 'none'}`;
  if (query.fault === 'splitBrain') {
    return {
      effect: promoted !== undefined && oldSays === 'master',
      detail: `${detail}${promoted && oldSays === 'master' ? `; two primaries: ${from} (its own view) and ${promoted.id}` : ''}`,
    };
  }
  return {
    effect: promoted !== undefined,
    detail: `${detail}${promoted ? `; ${promoted.id} promoted` : ''}`,
  };
}
