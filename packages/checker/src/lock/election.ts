import type { HistoryEvent } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
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
}

export type ElectionResult = CheckResult<ElectionViolation, ElectionStats>;

const KINDS: ReadonlySet<'claim'> = new Set(['claim']);

/**
 * Election safety from the resource's side: at most one leader at a time, and no claim accepted from a
 * leader whose term has been superseded. A reign spans a client's first to last accepted claim in a term,
 * so split brain shows as overlapping reigns (found by the same sweep as mutual exclusion).
 */
export function checkElection(history: Iterable<HistoryEvent>): ElectionResult {
  const violations: ElectionViolation[] = [];
  const stats: ElectionStats = { claims: 0, reigns: 0, staleRefused: 0, refused: 0, resources: 0 };
  const reigns = new Map<string, Reign>();
  const highest = new Map<string, { term: bigint; client: ClientId }>();

  for (const event of resourceEvents(history, KINDS)) {
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
    else if (term < top.term) {
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
  violations.push(...splitBrain([...reigns.values()]));
  stats.reigns = reigns.size;
  stats.resources = highest.size;
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats };
}

/**
 * Every pair of reigns by different clients that overlap or share a term: sort by start, then sweep.
 * Reigns are compared in the resource's order (time, ties by history index), as mutual exclusion is:
 * a hand-over within one nanosecond — the old leader's last claim, then the new one's first, at the
 * same `time` in index order — is one leader after the other, not two at once.
 */
function splitBrain(reigns: Reign[]): ElectionViolation[] {
  const found: ElectionViolation[] = [];
  reigns.sort((a, b) => a.from - b.from || a.firstIndex - b.firstIndex);
  const open = new Map<string, Reign[]>();
  const termHolders = new Map<string, Reign[]>();
  for (const reign of reigns) {
    const active = (open.get(reign.key) ?? []).filter(
      (r) => !comesBefore(r.to, r.lastIndex, reign.from, reign.firstIndex),
    );
    for (const other of active) {
      if (other.client !== reign.client) found.push(pair(other, reign, true));
    }
    const termId = JSON.stringify([reign.key, reign.term]);
    const sameTerm = termHolders.get(termId) ?? [];
    for (const other of sameTerm) {
      if (other.client !== reign.client && !active.includes(other)) found.push(pair(other, reign, false));
    }
    sameTerm.push(reign);
    termHolders.set(termId, sameTerm);
    active.push(reign);
    open.set(reign.key, active);
  }
  return found;
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
