import { EdnReader } from '../history/edn.js';
import {
  EdnChar,
  EdnDecimal,
  EdnFloat,
  EdnMap,
  EdnSet,
  EdnSymbol,
  isEdnAtom,
  Keyword,
  Ratio,
  Tagged,
} from '../history/edn-types.js';
import { HistoryShapeError } from '../history/errors.js';
import { plain } from '../history/jepsen-edn.js';
import { showValue } from '../history/show.js';
import type { Operation } from '../history/types.js';
import { fencedRegister } from './fenced-register.js';
import type { AnyModel } from './model.js';
import { multiRegister } from './multi-register.js';
import { casRegister, register } from './register.js';
import { modelByName } from './registry.js';
import { set } from './set.js';
import { canonicalJson } from './values.js';

/**
 * How a history's ops are read before the search:
 * - `knossos` (the default for Jepsen EDN): an `:ok` read of nil is a read whose value is unknown,
 *   always legal (knossos' register and cas-register); the keyword `:nil` reads as nil.
 * - `strict` (the default for JSONL and porcupine logs): a read of nil read the value nil.
 */
export type SemanticsName = 'knossos' | 'strict';
/** `jepsen.independent` `[key value]` tuples: detected (`auto`), assumed (`on`) or never split (`off`). */
export type IndependentMode = 'auto' | 'on' | 'off';

export interface SemanticsOptions {
  semantics: SemanticsName;
  independent?: IndependentMode;
  /** The registers' value before any write; absent = the model's own (nil). */
  initialValue?: unknown;
  /**
   * performance.now() time (ms) by which reading the ops must end: past it `SemanticsTimeoutError`
   * is thrown (the caller answers unknown). Splitting 100 000 keys takes about a second.
   */
  deadline?: number;
}

/** `applySemantics` ran past `options.deadline`: the check must end unknown (timeout), not pass. */
export class SemanticsTimeoutError extends Error {
  override get name(): string {
    return 'SemanticsTimeoutError';
  }
}

/** Ops between clock reads while applying semantics. */
const TICK = 4096;

/** What was applied, for reports (`--json` prints it as `semantics`). */
export interface AppliedSemantics {
  name: SemanticsName;
  /**
   * `unknown`: `:ok` reads of nil were left out as reads of an unknown value (always legal; in
   * `multi-register` txns always so); `value`: nil is a value. Absent for models without reads of a value.
   */
  nilReads?: 'unknown' | 'value';
  /** Completed reads of nil left out under `nilReads: 'unknown'`. */
  nilReadsUnknown: number;
  /** The keyword `:nil` read as nil (EDN). */
  nilKeyword: boolean;
  /** The initial value the model started from (null: nil); absent for models that have none to set. */
  initialValue?: unknown;
  independent: {
    mode: IndependentMode;
    /** Whether ops were split by the key of their `[key value]` tuples. */
    applied: boolean;
    /** Keys with an op left to check (a key with only reads of nil has none under knossos). */
    keys: number;
    /** Why `auto` did not split (the first op that is no tuple), when it did not. */
    why?: string;
  };
  /** Ops with an `f` the model has no operation for (nemesis-like ops of client processes): left out. */
  ignored: { ops: number; byF: Record<string, number> };
}

/** The operations each built-in model understands; any other `f` is left out of the check and counted. */
export const MODEL_OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  register: ['read', 'write'],
  'cas-register': ['read', 'write', 'cas'],
  kv: ['get', 'put', 'append'],
  mutex: ['acquire', 'release'],
  'fenced-register': ['read', 'write'],
  set: ['add', 'read'],
  'multi-register': ['txn'],
};

/** Models that start from a value `--initial-value` can set. */
export const INITIAL_VALUE_MODELS: readonly string[] = [
  'register',
  'cas-register',
  'fenced-register',
  'multi-register',
];

/** Models whose `read` returns the register's value, so a nil read may mean "unknown" (knossos). */
const NIL_READ_MODELS: ReadonlySet<string> = new Set(['register', 'cas-register', 'fenced-register']);

/**
 * `--initial-value` text → a value: EDN (`0`, `nil`, `"a"`, `:k`, `{:x 0}`), `null` also meaning nil.
 * For an EDN history (`edn`, the default) the value keeps its EDN types, as the history's do; for a
 * JSON one it is read into JSON's types, the only ones its values have (`:k` as `"k"`, `{:x 0}` as
 * `{"x": 0}`, `1.5` as 1.5). Throws `HistoryShapeError` for text that is no single EDN value.
 */
export function parseInitialValue(text: string, edn = true): unknown {
  if (text.trim() === 'null') return null;
  const reader = new EdnReader(text, '--initial-value');
  const value = reader.read();
  if (!reader.atEnd()) throw new HistoryShapeError('--initial-value', `expected one EDN value, got ${text}`);
  const read = plain(value, true);
  return edn ? read : asJson(read);
}

/** An EDN-read value in JSON's types: keywords, symbols and characters as strings, sets as arrays, maps as objects. */
function asJson(value: unknown): unknown {
  if (value instanceof Keyword || value instanceof EdnSymbol) return value.name;
  if (value instanceof EdnChar) return value.char;
  if (value instanceof EdnFloat) return value.value;
  if (value instanceof Ratio) return Number(value.numerator) / Number(value.denominator);
  if (value instanceof EdnDecimal) return Number(value.text.slice(0, -1));
  if (value instanceof Tagged) return typeof value.value === 'string' ? value.value : asJson(value.value);
  if (value instanceof EdnSet) return value.items.map(asJson);
  if (Array.isArray(value)) return value.map(asJson);
  if (value instanceof EdnMap) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value.entries) {
      const name = asJson(k);
      // Defined, not assigned: a key named `__proto__` is data, not the object's prototype.
      Object.defineProperty(out, typeof name === 'string' ? name : showValue(name), {
        value: asJson(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/**
 * A built-in model by name with the initial value (when given), or undefined for an unknown name.
 * `edn`: the history is EDN, whose reads have Clojure's types (a set read must be a set).
 */
export function modelWithInitialValue(
  name: string,
  initialValue?: unknown,
  edn = false,
): AnyModel | undefined {
  if (initialValue === undefined)
    return name === 'set' && edn ? set({ arrayReads: false }) : modelByName(name);
  switch (name) {
    case 'register':
      return register({ initial: initialValue });
    case 'cas-register':
      return casRegister({ initial: initialValue });
    case 'fenced-register':
      return fencedRegister(initialValue);
    case 'multi-register': {
      const isMap =
        initialValue instanceof EdnMap ||
        (initialValue !== null &&
          typeof initialValue === 'object' &&
          Object.getPrototypeOf(initialValue) === Object.prototype);
      if (!isMap) {
        throw new HistoryShapeError(
          '--initial-value',
          `the multi-register model starts from a map of registers ({:x 0, :y 0}), got ${showValue(initialValue)}`,
        );
      }
      return multiRegister(initialValue as Record<string, unknown> | EdnMap);
    }
    default:
      throw new HistoryShapeError(
        '--initial-value',
        `the ${name} model has no initial value to set (only ${INITIAL_VALUE_MODELS.join(', ')})`,
      );
  }
}

/**
 * Reads paired operations as the chosen semantics says, for model `modelName`: ops with an `f` the
 * model has no operation for are left out (counted by `f`); `jepsen.independent` tuples are split
 * by key (each op gets `key`, its values unwrapped) when `independent` is `on`, or `auto` finds every
 * op of the model a tuple; under `knossos`, completed reads of nil are left out (a read of an unknown
 * value constrains nothing and changes nothing). Returns new operations, ids renumbered 0…n-1, and
 * the model (partitioned by key when split). Throws `HistoryShapeError` when `on` meets an op that
 * is no tuple, or a completion naming another key than its invoke.
 */
export function applySemantics(
  ops: readonly Operation[],
  modelName: string,
  model: AnyModel,
  options: SemanticsOptions,
): { ops: Operation[]; model: AnyModel; applied: AppliedSemantics } {
  const mode = options.independent ?? 'auto';
  const deadline = options.deadline;
  let ticks = 0;
  const tick = (what: string): void => {
    if (deadline === undefined || ++ticks % TICK !== 0 || performance.now() < deadline) return;
    throw new SemanticsTimeoutError(
      `the time budget (--timeout) ran out while ${what}, after ${ticks} steps`,
    );
  };
  const known = MODEL_OPERATIONS[modelName];
  const byF: Record<string, number> = Object.create(null);
  let ignored = 0;
  let concerned: Operation[] = [];
  for (const op of ops) {
    tick('reading the ops for the model');
    // knossos' register has no cas and fails on one; leaving it out would hide the value it swapped in.
    if (modelName === 'register' && op.f === 'cas')
      throw new HistoryShapeError(
        `op ${op.id}`,
        `the register model has no cas (cas ${showValue(op.input ?? null)} by process ${String(op.process)}); check it with --model cas-register`,
      );
    if (known !== undefined && !known.includes(op.f)) {
      byF[op.f] = (byF[op.f] ?? 0) + 1;
      ignored++;
    } else concerned.push({ ...op });
  }

  let split = false;
  let why: string | undefined;
  if (mode === 'on') {
    if (model.partition !== undefined)
      throw new HistoryShapeError(
        '--independent on',
        `the ${modelName} model already splits ops by their key`,
      );
    split = true;
  } else if (mode === 'auto') {
    if (model.partition !== undefined) why = `the ${modelName} model splits by key itself`;
    else if (concerned.length === 0) why = 'no op of the model (failed ops are dropped)';
    else {
      // Jepsen puts an op whose value is no tuple into every key's subhistory; auto tolerates such
      // ops only when they carry no value (invoked with nil, and crashed, failed or read nil), so a
      // plain history whose writes are scalars is never taken for an independent one.
      const first = concerned.find((op) => {
        tick('looking for jepsen.independent tuples');
        return !looksIndependent(op) && !isValueless(op);
      });
      if (first !== undefined)
        why = `op ${first.id} (${first.f} ${showValue(first.input ?? null)}) is no [key value] tuple`;
      else if (!concerned.some((op) => looksIndependent(op))) why = 'no op is a [key value] tuple';
      else split = true;
    }
  }
  const keys = new Set<string>();
  if (split) {
    const names = keyNames(concerned, () => tick('naming the keys'));
    const everyKey = [...new Set(names.values())];
    const expanded: Operation[] = [];
    for (const op of concerned) {
      tick('splitting the ops by key');
      const input = op.input;
      if (!isTuple(input)) {
        if (names.size === 0)
          throw new HistoryShapeError(
            `op ${op.id}`,
            `--independent on: ${op.f} ${showValue(input ?? null)} is no [key value] tuple`,
          );
        // As jepsen.independent does: an op that is no tuple belongs to every key's subhistory.
        for (const name of everyKey) {
          tick('copying an op that is no tuple into every key');
          expanded.push({ ...op, key: name });
        }
        continue;
      }
      expanded.push(op);
      const key = input[0];
      op.key = names.get(canonicalJson(key)) as string;
      op.input = input[1];
      const output = op.output;
      if (isTuple(output)) {
        if (canonicalJson(output[0]) !== canonicalJson(key)) {
          throw new HistoryShapeError(
            `op ${op.id}`,
            `its completion names key ${showValue(output[0])}, its invoke key ${showValue(key)}`,
          );
        }
        op.output = output[1];
      }
    }
    // Assigned, not spliced in: spreading 100 000 ops as arguments overflows the stack.
    concerned = expanded;
  }

  let nilReadsUnknown = 0;
  const kept: Operation[] = [];
  for (const op of concerned) {
    tick('leaving out reads of nil');
    if (
      options.semantics === 'knossos' &&
      NIL_READ_MODELS.has(modelName) &&
      op.f === 'read' &&
      op.status === 'ok' &&
      (op.output === null || op.output === undefined)
    ) {
      nilReadsUnknown++;
      continue;
    }
    kept.push(op);
    if (split) keys.add(op.key as string);
  }
  for (let i = 0; i < kept.length; i++) (kept[i] as Operation).id = i;

  const partitioned: AnyModel = split ? { ...model, partition: (op: Operation) => op.key ?? '' } : model;
  return {
    ops: kept,
    model: partitioned,
    applied: {
      name: options.semantics,
      ...(modelName === 'multi-register'
        ? { nilReads: 'unknown' as const }
        : NIL_READ_MODELS.has(modelName)
          ? { nilReads: options.semantics === 'knossos' ? ('unknown' as const) : ('value' as const) }
          : {}),
      nilReadsUnknown,
      nilKeyword: options.semantics === 'knossos',
      ...(INITIAL_VALUE_MODELS.includes(modelName) ? { initialValue: options.initialValue ?? null } : {}),
      independent: { mode, applied: split, keys: keys.size, ...(why === undefined ? {} : { why }) },
      ignored: { ops: ignored, byF },
    },
  };
}

/** An op invoked with nil whose completion says nothing either (crashed, failed, or a read of nil). */
function isValueless(op: Operation): boolean {
  if (op.input !== null && op.input !== undefined) return false;
  return op.status !== 'ok' || op.output === null || op.output === undefined;
}

function isTuple(value: unknown): value is [unknown, unknown] {
  return Array.isArray(value) && value.length === 2;
}

/**
 * A key Jepsen would write: a number, string, keyword, boolean, big integer, or another EDN atom
 * (symbol, character, float, ratio, decimal, `#uuid`/`#inst`).
 */
function isScalarKey(value: unknown): boolean {
  const t = typeof value;
  if (t === 'number' || t === 'string' || t === 'bigint' || t === 'boolean') return true;
  return isEdnAtom(value) || (value instanceof Tagged && typeof value.value === 'string');
}

/**
 * Is this op of a `jepsen.independent` history? Its invoke value is `[key value]` with a scalar
 * key, a cas's value `[key [old new]]`, and a completed op's result `[key value]` with the same key.
 * A plain history fails at its first read (invoked with nil) or cas (`[old new]`, new no pair).
 */
function looksIndependent(op: Operation): boolean {
  const input = op.input;
  if (!isTuple(input) || !isScalarKey(input[0])) return false;
  if (op.f === 'cas' && !isTuple(input[1])) return false;
  if (op.status !== 'ok') return true;
  const output = op.output;
  return isTuple(output) && canonicalJson(output[0]) === canonicalJson(input[0]);
}

/**
 * Each key's name in reports: a string as itself, anything else as its canonical text (2, true,
 * `:a`, `1.0`, [1,2]): keys are one key exactly when Clojure's `=` says so (`:a` and `"a"`, 1 and
 * 1.0 are two). If two different keys would share a name (2 and "2", `:a` and ":a"), every string
 * key is written quoted.
 */
function keyNames(ops: readonly Operation[], tick: () => void): Map<string, string> {
  const canonical = new Map<string, unknown>();
  for (const op of ops) {
    tick();
    if (isTuple(op.input)) canonical.set(canonicalJson(op.input[0]), op.input[0]);
  }
  const names = new Map<string, string>();
  const bare = (key: unknown) => (typeof key === 'string' ? key : canonicalJson(key));
  const taken = new Set<string>();
  let clash = false;
  for (const key of canonical.values()) {
    const name = bare(key);
    if (taken.has(name)) clash = true;
    taken.add(name);
  }
  for (const [text, key] of canonical) names.set(text, clash ? text : bare(key));
  return names;
}
