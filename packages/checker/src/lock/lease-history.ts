import type { HistoryEvent, ProcessId } from '../history/types.js';
import { LockHistoryError } from './errors.js';
import { RESOURCE_PROCESS } from './events.js';

/**
 * What a lock client believed about its leases, read from its own operations (see the README's
 * "Lease histories"). All times are ns on the history's monotonic clock, as decimal strings or numbers.
 *
 * - **Grant**: an `ok` completion whose value has `validUntil` (ns, or `null` for a lease that claims
 *   no expiry). Optional: `grant` (an id unique in the history; without one, later facts of the same
 *   process refer to its latest grant), `resource` (else the event's `key`, else the invoke's
 *   `value.resource`, else one resource), `fence`, `at` (when `validUntil` was read; default the event's time),
 *   and, where the server counts the grant's TTL from the request (Redis, Redlock), `ttlMs` with `sentAt`
 *   (ns: by when the granting request had been handed to the client library).
 * - **Observation**: `value.lease` (an object or an array of them) on any client event:
 *   `{grant?, held, validUntil?, at?}` — the client read `held` (and `validUntil`) at `at`.
 * - **End**: the `invoke` of a release op (`release`, `resign`) naming `grant` (or the process's latest).
 */
export const LEASE_FACT = 'lease';
export const DEFAULT_RELEASE_OPS: readonly string[] = ['release', 'resign'];

/** One grant's believed-valid window: [start, end), empty when `end <= start`. */
export interface LeaseWindow {
  key: string;
  grant: string;
  process: ProcessId;
  fence?: string | undefined;
  /** When the client learnt of the grant (the `ok`'s time). */
  start: number;
  /** min(release, `held` seen false, the latest `validUntil` believed); Infinity = never ended. */
  end: number;
  /** The latest `validUntil` the client believed (Infinity = unbounded). */
  validUntil: number;
  /** The `validUntil` read at the grant, and when it was read (if the history says). */
  grantedValidUntil: number;
  grantedAt?: number | undefined;
  /**
   * The TTL asked, and when the request that was granted had been sent (ns), where the history records
   * them: only for backends whose server counts the TTL from that request (see `checkLeases`).
   */
  ttlMs?: number | undefined;
  sentAt?: number | undefined;
  endedBy: 'release' | 'not-held' | 'expired' | 'open';
  grantIndex: number;
  endIndex?: number | undefined;
  observations: number;
}

export interface LeaseFacts {
  windows: LeaseWindow[];
  /** Facts naming a grant the history never granted (or a process with no grant yet). */
  unlinked: number;
}

export interface LeaseFactOptions {
  /** Ops whose invoke ends the lease it names. Default `release`, `resign`. */
  releaseOps?: readonly string[];
}

interface Fact {
  at: number;
  held: boolean;
  validUntil?: number | undefined;
  release: boolean;
  index: number;
}

interface Grant {
  window: LeaseWindow;
  facts: Fact[];
}

/** Every grant of the history with its believed-valid window, in history order. */
export function leaseWindows(history: Iterable<HistoryEvent>, options: LeaseFactOptions = {}): LeaseFacts {
  const releaseOps = new Set(options.releaseOps ?? DEFAULT_RELEASE_OPS);
  const grants = new Map<string, Grant>();
  const latest = new Map<ProcessId, string>();
  const invoked = new Map<ProcessId, HistoryEvent>();
  let unlinked = 0;
  const grantFor = (event: HistoryEvent, named: unknown): Grant | undefined => {
    const id = named === undefined || named === null ? latest.get(event.process) : String(named);
    const grant = id === undefined ? undefined : grants.get(id);
    if (!grant) unlinked++;
    return grant;
  };
  for (const event of inTimeOrder(history)) {
    if (event.process === RESOURCE_PROCESS || event.process === 'nemesis') continue;
    if (typeof event.time !== 'number' || Number.isNaN(event.time)) {
      throw new LockHistoryError(event.index, 'a numeric "time"', event.time);
    }
    const value = isObject(event.value) ? event.value : undefined;
    if (event.type === 'invoke') invoked.set(event.process, event);
    else {
      const invoke = invoked.get(event.process);
      invoked.delete(event.process);
      if (event.type === 'ok' && value && 'validUntil' in value) {
        const grant = newGrant(event, value, invoke);
        if (grants.has(grant.window.grant)) {
          throw new LockHistoryError(event.index, `a grant id used once`, grant.window.grant);
        }
        grants.set(grant.window.grant, grant);
        latest.set(event.process, grant.window.grant);
      }
    }
    if (!value) continue;
    if (event.type === 'invoke' && releaseOps.has(event.f)) {
      grantFor(event, value.grant)?.facts.push({
        at: event.time,
        held: false,
        release: true,
        index: event.index,
      });
    }
    const lease = value[LEASE_FACT];
    if (lease === undefined || lease === null) continue;
    for (const raw of Array.isArray(lease) ? lease : [lease]) {
      const fact = observation(event, raw);
      grantFor(event, (raw as Record<string, unknown>).grant)?.facts.push(fact);
    }
  }
  const windows: LeaseWindow[] = [];
  for (const grant of grants.values()) windows.push(close(grant));
  return { windows, unlinked };
}

function newGrant(
  event: HistoryEvent,
  value: Record<string, unknown>,
  invoke: HistoryEvent | undefined,
): Grant {
  const validUntil = nsOf(event, value.validUntil, 'validUntil', true);
  const resource =
    value.resource ??
    event.key ??
    (isObject(invoke?.value) ? (invoke.value as Record<string, unknown>).resource : undefined) ??
    '';
  const fence = value.fence;
  return {
    window: {
      key: String(resource),
      grant: value.grant === undefined || value.grant === null ? `#${event.index}` : String(value.grant),
      process: event.process,
      fence: fence === undefined || fence === null ? undefined : String(fence),
      start: event.time,
      end: Number.POSITIVE_INFINITY,
      validUntil,
      grantedValidUntil: validUntil,
      grantedAt: value.at === undefined ? undefined : nsOf(event, value.at, 'at'),
      ttlMs: value.ttlMs === undefined ? undefined : ttlOf(event, value.ttlMs),
      sentAt: value.sentAt === undefined ? undefined : nsOf(event, value.sentAt, 'sentAt'),
      endedBy: 'open',
      grantIndex: event.index,
      endIndex: undefined,
      observations: 0,
    },
    facts: [],
  };
}

function ttlOf(event: HistoryEvent, raw: unknown): number {
  if (typeof raw === 'number' && Number.isFinite(raw) && raw >= 0) return raw;
  throw new LockHistoryError(event.index, '"value.ttlMs" as a non-negative number of ms', raw);
}

function observation(event: HistoryEvent, raw: unknown): Fact {
  if (!isObject(raw) || typeof raw.held !== 'boolean') {
    throw new LockHistoryError(
      event.index,
      `"value.${LEASE_FACT}" as {held: boolean, validUntil?, at?}`,
      raw,
    );
  }
  return {
    at: raw.at === undefined ? event.time : nsOf(event, raw.at, `${LEASE_FACT}.at`),
    held: raw.held,
    validUntil:
      raw.validUntil === undefined
        ? undefined
        : nsOf(event, raw.validUntil, `${LEASE_FACT}.validUntil`, true),
    release: false,
    index: event.index,
  };
}

/**
 * Walks a grant's facts in the order the client made them. The window runs to the release (the client
 * stopped acting) or to a `held: false` that no later `held: true` reading follows, but no further than
 * the latest `validUntil` it read while it held — and at least to that reading itself (it said it held
 * then). A later reading counts even when an earlier validity had lapsed, or an earlier fact said not
 * held, before it: a client that reads `held: true` again believes again, and it acts on `held` (the
 * harness records the signal's abort as `held: false`, and a client that still read `held: true` after
 * it and wrote is exactly what must be judged). As with a lapse, the window spans the gap: the client
 * did not read in between, so nothing says it stopped believing.
 */
function close(grant: Grant): LeaseWindow {
  const w = grant.window;
  const facts = grant.facts.sort((a, b) => a.at - b.at || a.index - b.index);
  let believed = w.validUntil;
  let heldAt = w.start;
  let ended = Number.POSITIVE_INFINITY;
  for (const fact of facts) {
    if (fact.release) {
      if (ended === Number.POSITIVE_INFINITY) {
        ended = fact.at;
        w.endedBy = 'release';
        w.endIndex = fact.index;
      }
      break;
    }
    if (!fact.held) {
      if (ended === Number.POSITIVE_INFINITY) {
        ended = fact.at;
        w.endedBy = 'not-held';
        w.endIndex = fact.index;
      }
      continue;
    }
    // Believes again: an earlier `held: false` no longer ends the window.
    ended = Number.POSITIVE_INFINITY;
    w.endedBy = 'open';
    w.endIndex = undefined;
    w.observations++;
    heldAt = Math.max(heldAt, fact.at);
    if (fact.validUntil !== undefined) believed = fact.validUntil;
  }
  w.validUntil = believed;
  const belief = Math.max(believed, heldAt);
  if (belief < ended) {
    w.end = belief;
    w.endedBy = Number.isFinite(belief) ? 'expired' : 'open';
    w.endIndex = undefined;
  } else {
    w.end = ended;
  }
  return w;
}

/** The history in time order (ties by index), without a copy when it already is. */
export function inTimeOrder(history: Iterable<HistoryEvent>): readonly HistoryEvent[] {
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  for (let i = 1; i < all.length; i++) {
    const a = all[i - 1]!;
    const b = all[i]!;
    if (b.time < a.time || (b.time === a.time && b.index < a.index)) {
      return [...all].sort((x, y) => x.time - y.time || x.index - y.index);
    }
  }
  return all;
}

/** A time in ns from a decimal string or a number; `null` is "unbounded" where allowed. */
export function nsOf(event: HistoryEvent, raw: unknown, field: string, nullable = false): number {
  if (raw === null && nullable) return Number.POSITIVE_INFINITY;
  if (typeof raw === 'number' && Number.isFinite(raw)) return raw;
  if (typeof raw === 'string' && /^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  throw new LockHistoryError(
    event.index,
    `"value.${field}" as ns (a decimal string or a number${nullable ? ', or null' : ''})`,
    raw,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
