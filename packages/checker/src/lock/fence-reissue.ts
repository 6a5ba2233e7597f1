import type { HistoryEvent } from '../history/types.js';
import type { StepBudget } from './budget.js';
import { RESOURCE_PROCESS } from './events.js';

/** One fence the lock handed to more than one grant: its counter went backwards (a failover lost grants). */
export interface ReissuedFence {
  /** The grant's resource (`value.resource`, else the event's `key`, else one resource). */
  resource: string;
  fence: string;
  /** The grants it was handed to, in history order (at most the first few). */
  grants: string[];
  /** History index of each listed grant's first record, in the order of `grants`. */
  indices: number[];
  /** History index of the second grant: where the reuse became visible. */
  index: number;
  /** When the second grant was recorded (history clock). */
  time: number;
  /** The process the second grant went to. */
  process: number | string;
}

export interface FenceReissue {
  /** Grants that carried a fence. */
  grants: number;
  /** Distinct fences granted to two or more grants. */
  reissued: ReissuedFence[];
}

/** Grants listed per reissued fence: enough to find them in the history. */
const GRANTS_SHOWN = 4;

/**
 * Fences granted twice, read from the clients' grants (an `ok` whose value carries `grant` and `fence`, as the
 * harness's acquire records it), in history order (`index`), whatever the file order. It is the evidence that the
 * lock's own promise (each grant a fresh, higher fence) did not hold, e.g. a promoted replica that never saw the
 * last grants: the fences checker convicts it (`reissued`). A resource that remembers the highest fence it
 * accepted still refuses the second holder; that is reported beside it (`reissueFinding`).
 */
export function reissuedFences(history: Iterable<HistoryEvent>, budget?: StepBudget): FenceReissue {
  const granted: { event: HistoryEvent; grant: string; fence: string; resource: string }[] = [];
  let ordered = true;
  for (const event of history) {
    budget?.tick();
    if (event.type !== 'ok' || event.process === RESOURCE_PROCESS || event.process === 'nemesis') continue;
    const value = event.value as { grant?: unknown; fence?: unknown; resource?: unknown } | null;
    if (typeof value !== 'object' || value === null) continue;
    const fence = fenceText(value.fence);
    if (fence === undefined || (typeof value.grant !== 'string' && typeof value.grant !== 'number')) continue;
    const resource = typeof value.resource === 'string' ? value.resource : (event.key ?? '');
    const last = granted.at(-1);
    if (last !== undefined && last.event.index > event.index) ordered = false;
    granted.push({ event, grant: String(value.grant), fence, resource });
  }
  // Which grant came second is a matter of history order; a file written out of order is read in it.
  if (!ordered) granted.sort((a, b) => a.event.index - b.event.index);
  const byFence = new Map<string, ReissuedFence>();
  const reissued: ReissuedFence[] = [];
  for (const { event, grant, fence, resource } of granted) {
    budget?.tick();
    const id = `${resource}\0${fence}`;
    const seen = byFence.get(id);
    if (seen === undefined) {
      byFence.set(id, {
        resource,
        fence,
        grants: [grant],
        indices: [event.index],
        index: event.index,
        time: event.time,
        process: event.process,
      });
      continue;
    }
    if (seen.grants.includes(grant)) continue;
    if (seen.grants.length === 1) {
      seen.index = event.index;
      seen.time = event.time;
      seen.process = event.process;
      reissued.push(seen);
    }
    if (seen.grants.length < GRANTS_SHOWN) {
      seen.grants.push(grant);
      seen.indices.push(event.index);
    }
  }
  return { grants: granted.length, reissued };
}

/** A fence as its canonical decimal text (so "007" and 7 are one fence), or undefined when it is none. */
function fenceText(raw: unknown): string | undefined {
  if (typeof raw === 'bigint') return raw.toString();
  if (typeof raw === 'string' && /^-?\d+$/.test(raw)) return BigInt(raw).toString();
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return String(raw);
  return undefined;
}

/**
 * The finding a run page shows for reissued fences: how many, the first one, and what the resource did with the
 * stale fences it was shown. The reuse itself is convicted (`reissued` violations); this says whether fencing
 * saved the resource anyway (every stale fence refused: "fencing held").
 */
export function reissueFinding(
  reissue: FenceReissue,
  resource: { staleRefused: number; staleAccepted: number },
): string | undefined {
  const n = reissue.reissued.length;
  if (n === 0) return undefined;
  const first = reissue.reissued[0] as ReissuedFence;
  const where = first.resource === '' ? '' : ` on ${first.resource}`;
  return (
    `fence reissued: ${n} fence${n === 1 ? '' : 's'} granted twice (first: fence ${first.fence}${where} to grants ` +
    `${first.grants.join(' and ')}): the lock's counter went backwards. The resource refused ` +
    `${resource.staleRefused} stale fence${resource.staleRefused === 1 ? '' : 's'} and accepted ` +
    `${resource.staleAccepted} (${resource.staleAccepted === 0 ? 'fencing held' : 'see the violations'})`
  );
}
