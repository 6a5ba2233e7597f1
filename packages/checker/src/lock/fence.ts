import type { HistoryEvent } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import type { ClientId, ResourceEvent } from './events.js';
import { type ReissuedFence, reissuedFences, reissueFinding } from './fence-reissue.js';
import { acceptedOf, clientOf, fenceOf, resourceEvents, resourceKey } from './resource-log.js';

/**
 * The resource accepted a fence it should have refused:
 * - `stale-accepted`: lower than one it had already accepted (a deposed holder's write got through);
 * - `shared-fence`: equal to the highest accepted, but from another client (two holders, one token).
 */
export interface FenceViolation {
  kind: 'stale-accepted' | 'shared-fence';
  key: string;
  message: string;
  index: number;
  time: number;
  f: string;
  client: ClientId;
  fence: string;
  highest: string;
  highestClient: ClientId;
  highestIndex: number;
}

export interface FenceStats {
  /** Fenced events the resource accepted. */
  accepted: number;
  /** Stale fences the resource refused: evidence that fencing did its job. */
  staleRefused: number;
  /** Fresh fences (above every accepted one) the resource refused: not unsafe, but wasted work. */
  freshRefused: number;
  /** Grant-like events that carried no fence, so could not be judged. */
  unfenced: number;
  resources: number;
  /** Clients' grants that carried a fence (`ok` with `grant` and `fence`), read for reissued fences. */
  grants: number;
  /** Fences the lock granted to two or more grants (see fence-reissue.ts): reported, not convicted. */
  reissued: number;
}

export type FenceResult = CheckResult<FenceViolation, FenceStats> & {
  /**
   * What the run shows that is no violation: fences granted twice. The lock broke its promise of a fresh fence
   * per grant; whether that harmed anything is the resource's verdict (a stale fence accepted), not this one.
   */
  findings?: string[];
  /** The reissued fences (the first 20). */
  reissuedFences?: ReissuedFence[];
};

/** Reissued fences kept in the result (all are counted). */
const REISSUED_KEPT = 20;

/** Events where the resource grants something on the strength of a fence. */
const GRANTS: ReadonlySet<'enter' | 'write' | 'claim' | 'run'> = new Set(['enter', 'write', 'claim', 'run']);

interface Highest {
  fence: bigint;
  client: ClientId;
  index: number;
}

/**
 * Fence monotonicity, per resource: the fences the resource accepts strictly increase from one holder to
 * the next (one holder may reuse its fence for several writes). A history with no fenced events cannot
 * show anything either way and is `unknown`. Fences the lock granted twice are counted and reported as a
 * finding; they convict only through what the resource accepted.
 */
export function checkFences(history: Iterable<HistoryEvent>, options: BudgetOptions = {}): FenceResult {
  const highest = new Map<string, Highest>();
  const violations: FenceViolation[] = [];
  const budget = new StepBudget(options.deadline);
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  const reissue = reissuedFences(all, budget);
  const stats: FenceStats = {
    accepted: 0,
    staleRefused: 0,
    freshRefused: 0,
    unfenced: 0,
    resources: 0,
    grants: reissue.grants,
    reissued: reissue.reissued.length,
  };

  for (const event of resourceEvents(all, GRANTS, budget)) {
    const fence = fenceOf(event);
    if (fence === undefined) {
      stats.unfenced++;
      continue;
    }
    const key = resourceKey(event);
    const client = clientOf(event);
    const top = highest.get(key);
    const fresh = top === undefined || fence > top.fence || (fence === top.fence && client === top.client);
    if (!acceptedOf(event, true)) {
      if (fresh) stats.freshRefused++;
      else stats.staleRefused++;
      continue;
    }
    stats.accepted++;
    if (fresh) {
      if (top === undefined || fence > top.fence) highest.set(key, { fence, client, index: event.index });
      continue;
    }
    violations.push(violation(event, key, client, fence, top));
  }
  stats.resources = highest.size;
  const finding = reissueFinding(reissue, {
    staleRefused: stats.staleRefused,
    staleAccepted: violations.length,
  });
  const reported =
    finding === undefined
      ? {}
      : { findings: [finding], reissuedFences: reissue.reissued.slice(0, REISSUED_KEPT) };
  if (stats.accepted + stats.staleRefused + stats.freshRefused === 0) {
    return {
      ...nothingToCheck('no fenced resource events ("enter", "write", "claim" or "run" with a fence)', stats),
      ...reported,
    };
  }
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats, ...reported };
}

function violation(
  event: ResourceEvent,
  key: string,
  client: ClientId,
  fence: bigint,
  top: Highest,
): FenceViolation {
  const stale = fence < top.fence;
  return {
    kind: stale ? 'stale-accepted' : 'shared-fence',
    key,
    message: stale
      ? `${event.f} by client ${client} with fence ${fence} accepted after fence ${top.fence} of client ${top.client}`
      : `${event.f} by client ${client} accepted with fence ${fence}, already granted to client ${top.client}`,
    index: event.index,
    time: event.time,
    f: event.f,
    client,
    fence: fence.toString(),
    highest: top.fence.toString(),
    highestClient: top.client,
    highestIndex: top.index,
  };
}
