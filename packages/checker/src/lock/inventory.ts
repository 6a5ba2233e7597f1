import type { HistoryEvent, ProcessId } from '../history/types.js';
import { type CheckResult, nothingToCheck } from '../verdict.js';
import { type BudgetOptions, StepBudget } from './budget.js';
import { LockHistoryError } from './errors.js';
import { type ClientId, type InitEvent, RESOURCE_PROCESS, SALE_F } from './events.js';
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

export interface InventoryOptions extends BudgetOptions {
  /** Starting stock of every resource that has no `init` line. */
  initialStock?: number;
}

export type InventoryResult = CheckResult<InventoryViolation, Record<string, InventoryStats>>;

const KINDS: ReadonlySet<'init' | 'read' | 'write'> = new Set(['init', 'read', 'write']);

interface Ledger {
  stock: InventoryStats;
  current: number;
}

/** The `buy` outcomes of one resource (or of the buys that name none). */
type Sales = Pick<InventoryStats, 'sales' | 'acknowledged' | 'indeterminate' | 'failed'>;

/**
 * Lost updates and overselling on the inventory counter, per resource. Write by write, every accepted
 * write must take exactly one unit off the stock it replaced; overall, the units gone (initial − final)
 * must lie between the sales acknowledged and those plus the sales in doubt, and no more sales may be
 * acknowledged than there was stock; stock never goes negative. `stats` is per resource key ('' when
 * the history has none). The README's "Lock checkers: exact semantics" says how each case is judged.
 */
export function checkInventory(
  history: readonly HistoryEvent[],
  options: InventoryOptions = {},
): InventoryResult {
  const budget = new StepBudget(options.deadline);
  const events = resourceEvents(history, KINDS, budget);
  const sales = salesByResource(history);
  const starts = startingStocks(events);
  // Only writes and buys can break a bound: a stock that was set or read and never sold judges nothing.
  if (!events.some((e) => e.f === 'write') && sales.size === 0) {
    return nothingToCheck('no resource "write" lines and no "buy" operations', {});
  }
  // Buys that name no resource belong to the only one there is; with several, only their sum is known.
  const keys = new Set([...events.map(resourceKey), ...[...sales.keys()].filter((k) => k !== '')]);
  const unkeyed = sales.get('');
  const pooled = unkeyed !== undefined && !keys.has('') && keys.size > 1;
  if (unkeyed !== undefined && !pooled && !keys.has('')) {
    // No unkeyed resource: the only keyed one, or (buys alone, no resource line) a resource ''.
    const only = keys.size === 1 ? [...keys][0]! : '';
    keys.add(only);
    if (only !== '') {
      addSales(salesOf(sales, only), unkeyed);
      sales.delete('');
    }
  }
  const ledgers = new Map<string, Ledger>();
  const unstarted: string[] = [];
  for (const key of keys) {
    const initial = starts.get(key) ?? options.initialStock;
    if (initial === undefined) unstarted.push(key);
    else ledgers.set(key, newLedger(initial, sales.get(key)));
  }

  const violations: InventoryViolation[] = [];
  for (const event of events) {
    budget.tick();
    const ledger = ledgers.get(resourceKey(event));
    if (ledger === undefined || event.f === 'init') continue;
    if (event.f === 'read') {
      ledger.stock.reads++;
      continue;
    }
    if (!acceptedOf(event)) {
      ledger.stock.writesRefused++;
      continue;
    }
    const wrote = numberOf(event, 'stock');
    const before = ledger.current;
    ledger.stock.writesAccepted++;
    ledger.current = wrote;
    const at = {
      key: resourceKey(event),
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

  for (const [key, ledger] of ledgers) {
    const s = ledger.stock;
    s.final = ledger.current;
    s.decrements = s.initial - s.final;
    if (!pooled) for (const v of totals(key, s)) violations.push(v);
  }
  const stats = Object.fromEntries([...ledgers].map(([key, l]) => [key, l.stock]));
  if (pooled && unstarted.length === 0) {
    // Several resources and buys that name none: the bound holds for all of them together.
    const all = pooledStats(
      [...ledgers.values()].map((l) => l.stock),
      unkeyed,
    );
    stats[''] = all;
    for (const v of totals('', all)) violations.push(v);
  }
  if (violations.length > 0) return { verdict: 'illegal', violations, stats };
  if (unstarted.length > 0) {
    const names = unstarted.map((k) => JSON.stringify(k)).join(', ');
    return {
      verdict: 'unknown',
      violations,
      stats,
      error: `no starting stock for resource ${names}: it needs an "init" line or initialStock (--initial-stock)`,
    };
  }
  return { verdict: 'ok', violations, stats };
}

/**
 * The `init` line of each resource: its starting stock wherever the line sits (the harness writes it
 * first, but a merged file or a clock tie can place it after the first writes). Two for one resource
 * cannot both be its start.
 */
function startingStocks(events: readonly HistoryEvent[]): Map<string, number> {
  const starts = new Map<string, number>();
  for (const event of events) {
    if (event.f !== 'init') continue;
    const key = resourceKey(event);
    if (starts.has(key)) throw new LockHistoryError(event.index, `one "init" for resource "${key}"`);
    starts.set(key, numberOf(event as InitEvent, 'stock'));
  }
  return starts;
}

function newLedger(initial: number, sales: Sales | undefined): Ledger {
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
  if (sales !== undefined) addSales(stock, sales);
  return { stock, current: initial };
}

function pooledStats(all: readonly InventoryStats[], unkeyed: Sales | undefined): InventoryStats {
  const sum = (field: keyof InventoryStats) => all.reduce((total, s) => total + s[field], 0);
  const pooled: InventoryStats = {
    initial: sum('initial'),
    final: sum('final'),
    decrements: sum('decrements'),
    sales: sum('sales'),
    acknowledged: sum('acknowledged'),
    indeterminate: sum('indeterminate'),
    failed: sum('failed'),
    writesAccepted: sum('writesAccepted'),
    writesRefused: sum('writesRefused'),
    reads: sum('reads'),
  };
  if (unkeyed !== undefined) addSales(pooled, unkeyed);
  return pooled;
}

function addSales(to: Sales, from: Sales): void {
  to.sales += from.sales;
  to.acknowledged += from.acknowledged;
  to.indeterminate += from.indeterminate;
  to.failed += from.failed;
}

function salesOf(sales: Map<string, Sales>, key: string): Sales {
  let found = sales.get(key);
  if (found === undefined) {
    found = { sales: 0, acknowledged: 0, indeterminate: 0, failed: 0 };
    sales.set(key, found);
  }
  return found;
}

function fenceField(value: { fence?: unknown }): { fence?: string } {
  return value.fence === undefined || value.fence === null ? {} : { fence: String(value.fence) };
}

/**
 * Pairs each client's `buy` invoke with its completion, in history index order (whatever the order of
 * the lines in the file); an invoke never completed is in doubt. A sale belongs to the resource its
 * invoke (or else its completion) names, '' when neither does.
 */
function salesByResource(history: readonly HistoryEvent[]): Map<string, Sales> {
  const buys = history.filter((e) => e.f === SALE_F && e.process !== RESOURCE_PROCESS);
  buys.sort((a, b) => a.index - b.index);
  const sales = new Map<string, Sales>();
  const pending = new Map<ProcessId, HistoryEvent>();
  for (const event of buys) {
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
    const s = salesOf(sales, invoke.key ?? event.key ?? '');
    s.sales++;
    if (event.type === 'ok') s.acknowledged++;
    else if (event.type === 'fail') s.failed++;
    else s.indeterminate++;
  }
  for (const invoke of pending.values()) {
    const s = salesOf(sales, invoke.key ?? '');
    s.sales++;
    s.indeterminate++;
  }
  return sales;
}

/**
 * The units-gone bounds of one resource. Judged only when it has recorded sales: a resource written to
 * with no `buy` recorded (another workload, or clients that record no operations) has nothing to
 * compare its units gone with, so only the write-by-write checks apply to it.
 */
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
