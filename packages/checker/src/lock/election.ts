import type { HistoryEvent } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import type { ClientId } from './events.js';
import { acceptedOf, clientOf, comesBefore, fenceOf, resourceEvents, resourceKey } from './resource-log.js';

/** A leader's reign as the resource saw it: its accepted claims for one term, first to last. */
export interface Reign {
  key: string;
  client: ClientId;
  term: string;
  from: number;
  to: number;
  claims: number;
  firstIndex: number;
  lastIndex: number;
}

/**
 * - `two-leaders`: the reigns of two clients overlap (split brain), or two clients' claims were
 *   accepted under the same term. For overlapping reigns `from`–`to` is the overlap; for reigns that
 *   share a term without overlapping, it spans both (first one's start to the later end);
 * - `deposed-claim`: a claim accepted under a term lower than one already accepted (a deposed leader
 *   still acting).
 */
export type ElectionViolation =
  | {
      kind: 'two-leaders';
      key: string;
      message: string;
      first: Reign;
      second: Reign;
      from: number;
      to: number;
    }
  | {
      kind: 'deposed-claim';
      key: string;
      message: string;
      index: number;
      time: number;
      client: ClientId;
      term: string;
      highestTerm: string;
      highestClient: ClientId;
    };

export interface ElectionStats {
  claims: number;
  reigns: number;
  /** Claims from deposed leaders that the resource refused: evidence the term check works. */
  staleRefused: number;
  refused: number;
  resources: number;
  /** Pairs of clients that led at once or shared a term (all counted; the first ones kept). */
  twoLeaders: number;
  /** Claims accepted from deposed leaders (all counted; the first ones kept). */
  deposedClaims: number;
}

export interface ElectionCheckOptions extends BudgetOptions {
  /** Violations kept in `violations` (all are counted in `stats`). Default 1000. */
  maxViolations?: number;
}

export type ElectionResult = CheckResult<ElectionViolation, ElectionStats>;

const KINDS: ReadonlySet<'claim'> = new Set(['claim']);

/**
 * Election safety from the resource's side: at most one leader at a time, and no claim accepted from a
 * leader whose term has been superseded. A reign spans a client's first to last accepted claim in a term,
 * so split brain shows as overlapping reigns (found by the same sweep as mutual exclusion).
 */
export function checkElection(
  history: Iterable<HistoryEvent>,
  options: ElectionCheckOptions = {},
): ElectionResult {
  const max = options.maxViolations ?? 1000;
  if (!Number.isInteger(max) || max < 0) {
    throw new LockHistoryError(undefined, 'maxViolations to be a non-negative integer', max);
  }
  const budget = new StepBudget(options.deadline);
  const violations: ElectionViolation[] = [];
  const stats: ElectionStats = {
    claims: 0,
    reigns: 0,
    staleRefused: 0,
    refused: 0,
    resources: 0,
    twoLeaders: 0,
    deposedClaims: 0,
  };
  const reigns = new Map<string, Reign>();
  const highest = new Map<string, { term: bigint; client: ClientId }>();

  for (const event of resourceEvents(history, KINDS, budget)) {
    const key = resourceKey(event);
    const client = clientOf(event);
    const term = fenceOf(event, 'term');
    if (term === undefined) throw missingTerm(event.index);
    const top = highest.get(key);
    if (!acceptedOf(event)) {
      stats.refused++;
      if (top !== undefined && term < top.term) stats.staleRefused++;
      continue;
    }
    stats.claims++;
    if (top === undefined || term > top.term) highest.set(key, { term, client });
    else if (term < top.term && stats.deposedClaims++ < max) {
      violations.push({
        kind: 'deposed-claim',
        key,
        message: `claim by client ${client} under term ${term} accepted after term ${top.term} of client ${top.client}`,
        index: event.index,
        time: event.time,
        client,
        term: term.toString(),
        highestTerm: top.term.toString(),
        highestClient: top.client,
      });
    }
    const id = JSON.stringify([key, client, term.toString()]);
    const reign = reigns.get(id);
    if (reign === undefined) {
      reigns.set(id, {
        key,
        client,
        term: term.toString(),
        from: event.time,
        to: event.time,
        claims: 1,
        firstIndex: event.index,
        lastIndex: event.index,
      });
    } else {
      reign.to = event.time;
      reign.lastIndex = event.index;
      reign.claims++;
    }
  }
  if (stats.claims + stats.refused === 0) return nothingToCheck('no resource "claim" lines', stats);
  // One list, one cap: the deposed claims found first, then split-brain pairs up to what is left.
  stats.twoLeaders = splitBrain([...reigns.values()], violations, max, budget);
  stats.reigns = reigns.size;
  stats.resources = highest.size;
  const convicted = stats.twoLeaders + stats.deposedClaims > 0;
  return { verdict: convicted ? 'illegal' : 'ok', violations, stats };
}

/**
 * Counts every pair of reigns by different clients that overlap or share a term, and appends them to
 * `out` until it holds `max`. Sort by start, then sweep with the open reigns of each resource in a heap
 * by end, and per-client and per-term tallies: a pair is counted in O(1) and listed only while `out` has
 * room, so 6 000 claims in one term take milliseconds instead of building 18 million pairs.
 * Reigns are compared in the resource's order (time, ties by history index), as mutual exclusion is:
 * a hand-over within one nanosecond — the old leader's last claim, then the new one's first, at the
 * same `time` in index order — is one leader after the other, not two at once.
 */
function splitBrain(reigns: Reign[], out: ElectionViolation[], max: number, budget: StepBudget): number {
  let found = 0;
  reigns.sort((a, b) => a.from - b.from || a.firstIndex - b.firstIndex);
  const resources = new Map<string, OpenReigns>();
  /** Every reign so far in a resource's term, and how many of them each client has (0 or 1). */
  const terms = new Map<string, { all: Reign[]; clients: Set<ClientId> }>();
  for (const reign of reigns) {
    budget.tick();
    let open = resources.get(reign.key);
    if (open === undefined) {
      open = new OpenReigns();
      resources.set(reign.key, open);
    }
    open.closeBefore(reign, budget);
    const termId = JSON.stringify([reign.key, reign.term]);
    let term = terms.get(termId);
    if (term === undefined) {
      term = { all: [], clients: new Set() };
      terms.set(termId, term);
    }
    // Overlapping reigns of other clients.
    const overlapping = open.size - (open.byClient.get(reign.client) ?? 0);
    found += overlapping;
    if (overlapping > 0 && out.length < max) {
      for (const other of open.reigns) {
        budget.tick();
        if (out.length >= max) break;
        if (other.client !== reign.client) out.push(pair(other, reign, true));
      }
    }
    // Reigns of other clients in the same term that no longer overlap (the overlapping ones are above).
    const sameTermOthers = term.all.length - (term.clients.has(reign.client) ? 1 : 0);
    const openSameTermOthers =
      (open.byTerm.get(reign.term) ?? 0) - (open.byClientTerm.has(clientTerm(reign)) ? 1 : 0);
    const apart = sameTermOthers - openSameTermOthers;
    found += apart;
    if (apart > 0 && out.length < max) {
      for (const other of term.all) {
        budget.tick();
        if (out.length >= max) break;
        if (other.client !== reign.client && !open.reigns.has(other)) out.push(pair(other, reign, false));
      }
    }
    term.all.push(reign);
    term.clients.add(reign.client);
    open.add(reign);
  }
  return found;
}

/**
 * The reigns of one resource still open at the sweep's position: a set (in start order, for listing),
 * a min-heap by end (to close them in O(log n)), and counts per client and per term.
 */
class OpenReigns {
  readonly reigns = new Set<Reign>();
  readonly byClient = new Map<ClientId, number>();
  readonly byTerm = new Map<string, number>();
  /** (term, client) of open reigns: a client has one reign per term. */
  readonly byClientTerm = new Set<string>();
  readonly #heap: Reign[] = [];

  get size(): number {
    return this.reigns.size;
  }

  add(reign: Reign): void {
    this.reigns.add(reign);
    this.byClient.set(reign.client, (this.byClient.get(reign.client) ?? 0) + 1);
    this.byTerm.set(reign.term, (this.byTerm.get(reign.term) ?? 0) + 1);
    this.byClientTerm.add(clientTerm(reign));
    const heap = this.#heap;
    heap.push(reign);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!endsBefore(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** Drops the reigns whose last claim comes before `next`'s first. */
  closeBefore(next: Reign, budget: StepBudget): void {
    const heap = this.#heap;
    while (heap.length > 0 && comesBefore(heap[0]!.to, heap[0]!.lastIndex, next.from, next.firstIndex)) {
      budget.tick();
      const done = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let least = i;
          if (l < heap.length && endsBefore(heap[l]!, heap[least]!)) least = l;
          if (r < heap.length && endsBefore(heap[r]!, heap[least]!)) least = r;
          if (least === i) break;
          [heap[i], heap[least]] = [heap[least]!, heap[i]!];
          i = least;
        }
      }
      this.reigns.delete(done);
      this.byClient.set(done.client, this.byClient.get(done.client)! - 1);
      this.byTerm.set(done.term, this.byTerm.get(done.term)! - 1);
      this.byClientTerm.delete(clientTerm(done));
    }
  }
}

/** A (term, client) pair as one string: JSON keeps client 1 and client "1" apart, as `!==` does. */
function clientTerm(reign: Reign): string {
  return JSON.stringify([reign.term, reign.client]);
}

function endsBefore(a: Reign, b: Reign): boolean {
  return comesBefore(a.to, a.lastIndex, b.to, b.lastIndex);
}

/** `first` began before `second`; `overlapping` when their reigns intersect (else they share a term). */
function pair(first: Reign, second: Reign, overlapping: boolean): ElectionViolation {
  const same = first.term === second.term;
  return {
    kind: 'two-leaders',
    key: first.key,
    message: same
      ? `clients ${first.client} and ${second.client} both accepted as leader of term ${first.term}`
      : `client ${first.client} (term ${first.term}) and client ${second.client} (term ${second.term}) both had claims accepted at once`,
    first,
    second,
    // Never inverted: an overlap starts at the later start and ends at the earlier end; a shared term
    // without overlap spans from the first reign's start to the end of the later one.
    from: overlapping ? second.from : first.from,
    to: overlapping ? Math.min(first.to, second.to) : Math.max(first.to, second.to),
  };
}

function missingTerm(index: number): Error {
  return new LockHistoryError(index, '"value.term" on a resource "claim"');
}
