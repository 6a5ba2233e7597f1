import type { HistoryEvent, ProcessId } from '../history/types.js';
import type { CheckResult } from '../verdict.js';
import { LockHistoryError } from './errors.js';
import { type ClientId, RESOURCE_PROCESS, SALE_F } from './events.js';
import { acceptedOf, clientOf, numberOf, resourceEvents, resourceKey } from './resource-log.js';

/**
 * - `lost-update`: a write that did not take exactly one off the stock it replaced (it was computed from
 *   a stale read), or, in total, fewer units gone than sales acknowledged;
 * - `phantom-sale`: more units gone than sales acknowledged or in doubt (a failed sale took effect);
 * - `oversell`: the stock went below zero, or more sales were acknowledged than there was stock.
 */
export interface InventoryViolation {
  kind: 'lost-update' | 'phantom-sale' | 'oversell';
  key: string;
  message: string;
  /** The write at fault, when one write shows it. */
  index?: number;
  client?: ClientId;
  fence?: string;
  /** Stock before the write and the value written. */
  before?: number;
  wrote?: number;
}

export interface InventoryStats {
  initial: number;
  final: number;
  /** initial − final. */
  decrements: number;
  /** `buy` operations recorded by clients; without them only the write-by-write checks apply. */
  sales: number;
  /** `buy` operations completed `ok`. */
  acknowledged: number;
  /** `buy` operations with outcome unknown (`info`, or never completed). */
  indeterminate: number;
  failed: number;
  writesAccepted: number;
  writesRefused: number;
  reads: number;
}

export interface InventoryOptions {
  /** Starting stock when the history has no `init` event (one resource). */
  initialStock?: number;
}

export type InventoryResult = CheckResult<InventoryViolation, Record<string, InventoryStats>>;

const KINDS: ReadonlySet<'init' | 'read' | 'write'> = new Set(['init', 'read', 'write']);

interface Ledger {
  stock: InventoryStats;
  current: number;
  initialised: boolean;
}

/**
 * Lost updates and overselling on the inventory counter, per resource. Write by write, every accepted
 * write must take exactly one unit off the stock it replaced; overall, the units gone (initial − final)
 * must lie between the sales acknowledged and those plus the sales in doubt; stock never goes negative.
 * `stats` is per resource key ('' when the history has none).
 */
export function checkInventory(
  history: readonly HistoryEvent[],
  options: InventoryOptions = {},
): InventoryResult {
  const ledgers = new Map<string, Ledger>();
  const violations: InventoryViolation[] = [];
  const ledgerOf = (key: string, index: number): Ledger => {
    let ledger = ledgers.get(key);
    if (ledger === undefined) {
      if (options.initialStock === undefined) {
        throw new LockHistoryError(
          index,
          `an "init" event with the starting stock of resource "${key}" first`,
        );
      }
      ledger = newLedger(options.initialStock);
      ledgers.set(key, ledger);
    }
    return ledger;
  };

  for (const event of resourceEvents(history, KINDS)) {
    const key = resourceKey(event);
    if (event.f === 'init') {
      const initial = numberOf(event, 'stock');
      const existing = ledgers.get(key);
      if (existing?.initialised) throw new LockHistoryError(event.index, `one "init" for resource "${key}"`);
      ledgers.set(key, { ...newLedger(initial), initialised: true });
      continue;
    }
    const ledger = ledgerOf(key, event.index);
    if (event.f === 'read') {
      ledger.stock.reads++;
      continue;
    }
    if (event.f !== 'write') continue;
    if (!acceptedOf(event)) {
      ledger.stock.writesRefused++;
      continue;
    }
    const wrote = numberOf(event, 'stock');
    const before = ledger.current;
    ledger.stock.writesAccepted++;
    ledger.current = wrote;
    const at = {
      key,
      index: event.index,
      client: clientOf(event),
      before,
      wrote,
      ...fenceField(event.value),
    };
    if (wrote !== before - 1) {
      violations.push({
        kind: 'lost-update',
        message: `write of ${wrote} replaced stock ${before}: expected ${before - 1}`,
        ...at,
      });
    }
    if (wrote < 0) violations.push({ kind: 'oversell', message: `stock went to ${wrote}`, ...at });
  }

  countSales(history, (key, index) => ledgerOf(key, index).stock);
  for (const [key, ledger] of ledgers) {
    const s = ledger.stock;
    s.final = ledger.current;
    s.decrements = s.initial - s.final;
    violations.push(...totals(key, s));
  }
  return {
    verdict: violations.length > 0 ? 'illegal' : 'ok',
    violations,
    stats: Object.fromEntries([...ledgers].map(([key, l]) => [key, l.stock])),
  };
}

function newLedger(initial: number): Ledger {
  const stock: InventoryStats = {
    initial,
    final: initial,
    decrements: 0,
    sales: 0,
    acknowledged: 0,
    indeterminate: 0,
    failed: 0,
    writesAccepted: 0,
    writesRefused: 0,
    reads: 0,
  };
  return { stock, current: initial, initialised: false };
}

function fenceField(value: { fence?: unknown }): { fence?: string } {
  return value.fence === undefined || value.fence === null ? {} : { fence: String(value.fence) };
}

/** Pairs each client's `buy` invoke with its completion; an invoke never completed is in doubt. */
function countSales(
  history: readonly HistoryEvent[],
  statsOf: (key: string, index: number) => InventoryStats,
): void {
  const pending = new Map<ProcessId, HistoryEvent>();
  for (const event of history) {
    if (event.f !== SALE_F || event.process === RESOURCE_PROCESS) continue;
    if (event.type === 'invoke') {
      if (pending.has(event.process)) {
        throw new LockHistoryError(
          event.index,
          `a completion of process ${event.process}'s open "buy" first`,
        );
      }
      pending.set(event.process, event);
      continue;
    }
    const invoke = pending.get(event.process);
    if (invoke === undefined) {
      throw new LockHistoryError(
        event.index,
        `an invoke of "buy" by process ${event.process} before its completion`,
      );
    }
    pending.delete(event.process);
    const stats = statsOf(invoke.key ?? event.key ?? '', invoke.index);
    stats.sales++;
    if (event.type === 'ok') stats.acknowledged++;
    else if (event.type === 'fail') stats.failed++;
    else stats.indeterminate++;
  }
  for (const invoke of pending.values()) {
    const stats = statsOf(invoke.key ?? '', invoke.index);
    stats.sales++;
    stats.indeterminate++;
  }
}

function totals(key: string, s: InventoryStats): InventoryViolation[] {
  const found: InventoryViolation[] = [];
  if (s.sales === 0) return found;
  if (s.decrements < s.acknowledged) {
    found.push({
      kind: 'lost-update',
      key,
      message: `${s.acknowledged} sales acknowledged but the stock fell only by ${s.decrements} (${s.initial} → ${s.final})`,
    });
  }
  if (s.decrements > s.acknowledged + s.indeterminate) {
    found.push({
      kind: 'phantom-sale',
      key,
      message: `stock fell by ${s.decrements} but only ${s.acknowledged} sales were acknowledged and ${s.indeterminate} in doubt`,
    });
  }
  if (s.acknowledged > s.initial) {
    found.push({
      kind: 'oversell',
      key,
      message: `${s.acknowledged} sales acknowledged from a stock of ${s.initial}`,
    });
  }
  return found;
}
