import type { HistoryEvent } from '../history/types.js';
import type { CheckResult } from '../verdict.js';
import { LockHistoryError } from './errors.js';
import type { ClientId } from './events.js';
import { acceptedOf, clientOf, fenceOf, resourceEvents, resourceKey } from './resource-log.js';

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
 * - `two-leaders`: the reigns of two clients overlap in time (split brain), or two clients' claims were
 *   accepted under the same term;
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
  violations.push(...splitBrain([...reigns.values()]));
  stats.reigns = reigns.size;
  stats.resources = highest.size;
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats };
}

/** Pairs of reigns by different clients that overlap in time or share a term: sort by start, then sweep. */
function splitBrain(reigns: Reign[]): ElectionViolation[] {
  const found: ElectionViolation[] = [];
  reigns.sort((a, b) => a.from - b.from || a.firstIndex - b.firstIndex);
  const open = new Map<string, Reign[]>();
  const termHolders = new Map<string, Reign>();
  for (const reign of reigns) {
    const active = (open.get(reign.key) ?? []).filter((r) => r.to >= reign.from);
    for (const other of active) {
      if (other.client === reign.client) continue;
      found.push(pair(other, reign));
    }
    const sameTerm = termHolders.get(JSON.stringify([reign.key, reign.term]));
    if (sameTerm !== undefined && sameTerm.client !== reign.client && !active.includes(sameTerm)) {
      found.push(pair(sameTerm, reign));
    }
    termHolders.set(JSON.stringify([reign.key, reign.term]), reign);
    active.push(reign);
    open.set(reign.key, active);
  }
  return found;
}

function pair(first: Reign, second: Reign): ElectionViolation {
  const same = first.term === second.term;
  return {
    kind: 'two-leaders',
    key: first.key,
    message: same
      ? `clients ${first.client} and ${second.client} both accepted as leader of term ${first.term}`
      : `client ${first.client} (term ${first.term}) and client ${second.client} (term ${second.term}) both had claims accepted at once`,
    first,
    second,
    from: second.from,
    to: Math.min(first.to, second.to),
  };
}

function missingTerm(index: number): Error {
  return new LockHistoryError(index, '"value.term" on a resource "claim"');
}
