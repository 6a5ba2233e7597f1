import type { HistoryEvent } from '../history/types.js';
import type { StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import { type ClientId, RESOURCE_PROCESS, type ResourceEvent, type ResourceEventKind } from './events.js';

/**
 * The resource's events of the given kinds, in the order the resource saw them: by time, ties broken by
 * the history index (the resource appends its lines in the order it acts). Checks the fields every kind
 * shares; each checker reads its own fields through the accessors below, which name what was wrong.
 */
export function resourceEvents<K extends ResourceEventKind>(
  history: Iterable<HistoryEvent>,
  kinds: ReadonlySet<K>,
  budget?: StepBudget,
): Extract<ResourceEvent, { f: K }>[] {
  const events: Extract<ResourceEvent, { f: K }>[] = [];
  forEachResourceEvent(history, kinds, (e) => events.push(e), budget);
  return events;
}

/**
 * Calls `visit` for each of the resource's events of the given kinds, in the resource's order, without
 * copying the history when it is already in time order (harness histories are written that way; the
 * copy and the sort are the fallback for merged or foreign files). This is the hot path of the
 * mutual-exclusion check on million-operation histories.
 */
export function forEachResourceEvent<K extends ResourceEventKind>(
  history: Iterable<HistoryEvent>,
  kinds: ReadonlySet<K>,
  visit: (event: Extract<ResourceEvent, { f: K }>) => void,
  budget?: StepBudget,
): void {
  const all = Array.isArray(history) ? (history as readonly HistoryEvent[]) : [...history];
  let sorted = true;
  let lastTime = Number.NEGATIVE_INFINITY;
  let lastIndex = Number.NEGATIVE_INFINITY;
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    const event = all[i]!;
    budget?.tick();
    if (event.process !== RESOURCE_PROCESS || !kinds.has(event.f as K)) continue;
    count++;
    const time = event.time;
    if (typeof time !== 'number' || Number.isNaN(time)) {
      throw new LockHistoryError(event.index, 'a numeric "time"', time);
    }
    if (typeof event.value !== 'object' || event.value === null) {
      throw new LockHistoryError(event.index, `an object "value" for a resource "${event.f}"`, event.value);
    }
    if (time < lastTime || (time === lastTime && event.index < lastIndex)) sorted = false;
    lastTime = time;
    lastIndex = event.index;
  }
  if (sorted) {
    for (let i = 0; i < all.length; i++) {
      const event = all[i]!;
      budget?.tick();
      if (event.process === RESOURCE_PROCESS && kinds.has(event.f as K)) {
        visit(event as Extract<ResourceEvent, { f: K }>);
      }
    }
    return;
  }
  const picked: HistoryEvent[] = new Array(count);
  let n = 0;
  for (const event of all) {
    if (event.process === RESOURCE_PROCESS && kinds.has(event.f as K)) picked[n++] = event;
  }
  picked.sort((a, b) => a.time - b.time || a.index - b.index);
  for (const event of picked) {
    budget?.tick();
    visit(event as Extract<ResourceEvent, { f: K }>);
  }
}

/**
 * The resource's order: `a` (at `aTime`, history index `aIndex`) comes before `b` when it is earlier,
 * or at the same time with a lower index. Every lock checker orders events this way, whatever the
 * order of the lines in the file.
 */
export function comesBefore(aTime: number, aIndex: number, bTime: number, bIndex: number): boolean {
  return aTime < bTime || (aTime === bTime && aIndex < bIndex);
}

/** The resource (partition) an event belongs to; one resource when the history has no keys. */
export function resourceKey(event: HistoryEvent): string {
  return event.key ?? '';
}

export function clientOf(event: ResourceEvent): ClientId {
  const client = (event.value as { client?: unknown }).client;
  if (typeof client === 'number' || typeof client === 'string') return client;
  throw new LockHistoryError(event.index, `"value.client" (a process id) on a resource "${event.f}"`, client);
}

/** `value.accepted`; `fallback` when absent, or an error naming the event when the kind requires it. */
export function acceptedOf(event: ResourceEvent, fallback?: boolean): boolean {
  const accepted = (event.value as { accepted?: unknown }).accepted;
  if (typeof accepted === 'boolean') return accepted;
  if (accepted === undefined && fallback !== undefined) return fallback;
  throw new LockHistoryError(event.index, `boolean "value.accepted" on a resource "${event.f}"`, accepted);
}

/** `value[field]` as a fence (bigint), or undefined when absent. */
export function fenceOf(event: ResourceEvent, field: 'fence' | 'term' = 'fence'): bigint | undefined {
  const raw = (event.value as unknown as Record<string, unknown>)[field];
  if (raw === undefined || raw === null) return undefined;
  // JSON integers past 2^53 arrive as bigints (the JSONL reader keeps them exact).
  if (typeof raw === 'bigint') return raw;
  if (typeof raw === 'string' && /^-?\d+$/.test(raw)) return BigInt(raw);
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return BigInt(raw);
  throw new LockHistoryError(event.index, `"value.${field}" as an integer or a decimal string`, raw);
}

/** `value[field]` as a finite number. */
export function numberOf(event: ResourceEvent, field: string): number {
  const raw = (event.value as unknown as Record<string, unknown>)[field];
  if (typeof raw === 'number' && Number.isFinite(raw)) return raw;
  throw new LockHistoryError(event.index, `a number "value.${field}" on a resource "${event.f}"`, raw);
}
