import { showValue } from '../history/show.js';
import type { Operation } from '../history/types.js';

/**
 * A step the model refuses, with the reason shown in witnesses ("acquire while held by 3"). Models
 * return it rather than throw; hot paths return a shared instance so a failed step allocates nothing.
 */
export class Inconsistent {
  constructor(readonly reason: string) {}
}

/** Shorthand for `new Inconsistent(reason)`. */
export function inconsistent(reason: string): Inconsistent {
  return new Inconsistent(reason);
}

/**
 * A sequential specification, as a plain object of functions (porcupine's shape), so adding a model
 * is writing one object. `Op` is the model's own compact form of an operation, made once by `prepare`
 * so `step` — called millions of times — does no parsing.
 *
 * An op whose outcome is unknown (`status: 'info'`) may or may not have taken effect: `step` must
 * accept it in any state where it could have happened, ignoring its output.
 */
export interface Model<State = unknown, Op = Operation> {
  /** Short name used by the CLI (`--model`) and in reports. */
  readonly name: string;
  /** The state before any operation. */
  init(): State;
  /** Validates and compacts one operation; throws `HistoryShapeError` when the op makes no sense for this model. */
  prepare(op: Operation): Op;
  /** The state after `op`, or `Inconsistent` when `op` could not have happened (with its output) in `state`. */
  step(state: State, op: Op): State | Inconsistent;
  /**
   * Optional: true when `op` never changes the state in any state where it is legal (a read, a cas
   * known to have failed). The search places such ops as soon as they are enabled and legal, with no
   * alternative to try. A write that happens to rewrite the current value does not qualify.
   */
  readOnly?(op: Op): boolean;
  /**
   * Equality and hash of states. Primitive states (numbers, strings, null, bigint) need neither; object
   * states need both, and equal states must hash alike.
   */
  equal?(a: State, b: State): boolean;
  hash?(state: State): number;
  /** Key of the independent sub-history an op belongs to (P-compositionality); absent = one history. */
  partition?(op: Operation): string;
  /** Human-readable state and operation, for witnesses and the visualisation. */
  describeState?(state: State): string;
  describe?(op: Operation): string;
  /**
   * Optional pruning, built once per partition from its ops (slots index these arrays): `watch` lists
   * the slots worth testing, and `test` says whether the op at `slot` can no longer be legal in any
   * state reachable from `state`, given which ops are already placed. The search abandons a
   * configuration as soon as some unplaced watched op is unreachable. Must be sound: answer true
   * only when sure.
   */
  unreachable?(ops: readonly Operation[], prepared: readonly Op[]): Reachability<State> | undefined;
  /**
   * Optional cheap necessary conditions, checked before the search: returns the ids of ops that
   * cannot all be placed, with why, or undefined. Must be sound: it only convicts.
   */
  convict?(ops: readonly Operation[]): Conviction | undefined;
}

/** See `Model.unreachable`. */
export interface Reachability<State> {
  watch: readonly number[];
  test(state: State, slot: number, placed: (slot: number) => boolean): boolean;
}

/** Proof of illegality found without search: these ops cannot all appear in any linearization. */
export interface Conviction {
  reason: string;
  opIds: number[];
}

/** Any model, for APIs that accept models of every state and op type. */
// biome-ignore lint/suspicious/noExplicitAny: a model's state and op types are its own business
export type AnyModel = Model<any, any>;

/** `describe` fallback: `3 write 4 → ok`. */
export function describeOperation(op: Operation): string {
  const key = op.key === undefined ? '' : `[${op.key}] `;
  const out = op.status === 'info' ? '?' : showValue(op.output ?? null);
  return `${String(op.process)} ${key}${op.f} ${showValue(op.input ?? null)} → ${out}`;
}
