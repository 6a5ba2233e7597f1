import type { HistoryEvent } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import type { ClientId, ResourceEvent } from './events.js';
import { type ReissuedFence, reissuedFences, reissueFinding } from './fence-reissue.js';
import { acceptedOf, clientOf, fenceOf, resourceEvents, resourceKey } from './resource-log.js';

/**
 * A broken fence promise: the resource's (`AcceptedFenceViolation`) or the lock's (`ReissuedFenceViolation`).
 */
export type FenceViolation = AcceptedFenceViolation | ReissuedFenceViolation;

/**
 * The resource accepted a fence it should have refused:
 * - `stale-accepted`: lower than one it had already accepted (a deposed holder's write got through);
 * - `shared-fence`: equal to the highest accepted, but from another client (two holders, one token).
 */
export interface AcceptedFenceViolation {
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

/**
 * `reissued`: the lock handed one fence to two different grants of one resource, so its counter went backwards
 * (a promoted replica or a server restarted without persistence that never saw the last grants). The lock
 * promises each grant a fresh, higher fence; a resource that remembers the highest fence it accepted may still
 * refuse the second holder (the message says what it did), but the promise was broken either way.
 */
export interface ReissuedFenceViolation {
  kind: 'reissued';
  /** The grants' resource (`value.resource`, else the event's `key`, else `''`). */
  key: string;
  message: string;
  fence: string;
  /** The grants it was handed to, in history order (the first few). */
  grants: string[];
  /** History index of each listed grant's first record. */
  indices: number[];
  /** History index and time of the second grant: where the reuse became visible. */
  index: number;
  time: number;
  /** The process the second grant went to. */
  process: ClientId;
}

export interface FenceStats {
  /** Fenced events the resource accepted. */
  accepted: number;
  /** Stale fences the resource refused: evidence that fencing did its job. */
  staleRefused: number;
  /** Fresh fences (above every accepted one) the resource refused: not unsafe, but wasted work. */
  freshRefused: number;
  /**
   * Stale fences the resource accepted (one `stale-accepted` or `shared-fence` violation each): a stale write that
   * landed. Counted apart from the `reissued` violations, so "no stale write" can be read without the list.
   */
  staleAccepted: number;
  /** Grant-like events that carried no fence, so could not be judged. */
  unfenced: number;
  resources: number;
  /** Clients' grants that carried a fence (`ok` with `grant` and `fence`), read for reissued fences. */
  grants: number;
  /** Fences the lock granted to two or more grants (see fence-reissue.ts): one `reissued` violation each. */
  reissued: number;
}

export type FenceResult = CheckResult<FenceViolation, FenceStats> & {
  /**
   * Beside the `reissued` violations, what the resource made of them: how many stale fences it refused and
   * accepted ("fencing held" when it accepted none), so a run convicted for the lock's reuse still shows that
   * no stale write landed.
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
 * the next (one holder may reuse its fence for several writes), and the lock never hands one fence to two
 * different grants of one resource (`reissued`; the same grant recorded twice, a reclaim, is one grant). A
 * history with neither a fenced resource event nor a reissued fence cannot show anything either way and is
 * `unknown`. Reissued fences also yield a finding saying whether the resource refused the stale fences.
 */
export function checkFences(history: Iterable<HistoryEvent>, options: BudgetOptions = {}): FenceResult {
  const highest = new Map<string, Highest>();
  const violations: FenceViolation[] = [];
  /** What the resource did with each client's fence: read back for the reissued fences' messages. */
  const seenAt = new Map<string, { accepted: number; refused: number }>();
  const budget = new StepBudget(options.deadline);
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  const reissue = reissuedFences(all, budget);
  const stats: FenceStats = {
    accepted: 0,
    staleRefused: 0,
    freshRefused: 0,
    staleAccepted: 0,
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
    const accepted = acceptedOf(event, true);
    tally(seenAt, client, fence, accepted);
    if (!accepted) {
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
  const staleAccepted = violations.length;
  stats.staleAccepted = staleAccepted;
  for (const r of reissue.reissued) {
    budget.tick();
    violations.push(reissuedViolation(r, seenAt.get(tallyKey(r.process, BigInt(r.fence)))));
  }
  const finding = reissueFinding(reissue, { staleRefused: stats.staleRefused, staleAccepted });
  const reported =
    finding === undefined
      ? {}
      : { findings: [finding], reissuedFences: reissue.reissued.slice(0, REISSUED_KEPT) };
  if (stats.accepted + stats.staleRefused + stats.freshRefused === 0 && violations.length === 0) {
    return {
      ...nothingToCheck('no fenced resource events ("enter", "write", "claim" or "run" with a fence)', stats),
      ...reported,
    };
  }
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats, ...reported };
}

const tallyKey = (client: ClientId, fence: bigint) => `${typeof client} ${String(client)} ${fence}`;

function tally(
  seenAt: Map<string, { accepted: number; refused: number }>,
  client: ClientId,
  fence: bigint,
  accepted: boolean,
): void {
  const key = tallyKey(client, fence);
  const counts = seenAt.get(key) ?? { accepted: 0, refused: 0 };
  if (accepted) counts.accepted++;
  else counts.refused++;
  seenAt.set(key, counts);
}

/**
 * The lock's broken promise, with what the resource did with the second holder's fence: its accesses by the
 * second grant's process with that fence (over the whole run, on any resource: harness resources are
 * often unkeyed while grants name theirs).
 */
function reissuedViolation(
  r: ReissuedFence,
  seen: { accepted: number; refused: number } | undefined,
): ReissuedFenceViolation {
  const where = r.resource === '' ? '' : ` on ${r.resource}`;
  const [first, second] = r.grants;
  const [firstIndex, secondIndex] = r.indices;
  const holder = `process ${String(r.process)} with fence ${r.fence}`;
  const resource =
    seen === undefined
      ? `The resource saw no access of ${holder}`
      : `The resource refused ${seen.refused} access${seen.refused === 1 ? '' : 'es'} of ${holder} and accepted ${seen.accepted}`;
  return {
    kind: 'reissued',
    key: r.resource,
    message:
      `fence ${r.fence}${where} granted to ${first} (#${firstIndex}) and again to ${second} (#${secondIndex}): ` +
      `the lock's counter went backwards. ${resource}`,
    fence: r.fence,
    grants: [...r.grants],
    indices: [...r.indices],
    index: r.index,
    time: r.time,
    process: r.process,
  };
}

function violation(
  event: ResourceEvent,
  key: string,
  client: ClientId,
  fence: bigint,
  top: Highest,
): AcceptedFenceViolation {
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
