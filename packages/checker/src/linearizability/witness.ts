import type { Operation } from '../history/types.js';
import { type AnyModel, describeOperation, Inconsistent } from '../models/model.js';
import type { SearchLayout } from './history-order.js';

/** An op that could not be placed after the longest linearizable prefix, and why. */
export interface UnplacedOp {
  id: number;
  description: string;
  /** The model's refusal in the prefix's final state, or why placing it led nowhere. */
  reason: string;
}

/**
 * Why a partition is not linearizable: the longest prefix of a linearization the search found (op
 * ids in order), the state it ends in, and the ops that could come next but could not be placed.
 * `deadline` is the op that had to be placed before anything called after its return.
 */
export interface Witness {
  prefix: number[];
  finalState: string;
  unplaced: UnplacedOp[];
  deadline?: number;
  /** Set when a cheap necessary check convicted without search. */
  conviction?: string;
}

/** Rebuilds the configuration after `path` and lists what could not go next. */
export function buildWitness(
  model: AnyModel,
  layout: SearchLayout,
  prepared: unknown[],
  path: Int32Array,
): Witness {
  const { ops, required } = layout;
  const describe = model.describe ?? describeOperation;
  const placed = new Set<number>();
  let state: unknown = model.init();
  for (const slot of path) {
    const result = model.step(state, prepared[slot]);
    if (result instanceof Inconsistent) break; // cannot happen for a path the search took
    state = result;
    placed.add(slot);
  }
  // The earliest-returning completed op not placed bounds what may come next.
  let deadlineSlot = -1;
  for (let slot = 0; slot < required; slot++) {
    if (placed.has(slot)) continue;
    if (deadlineSlot === -1 || (ops[slot] as Operation).ret < (ops[deadlineSlot] as Operation).ret)
      deadlineSlot = slot;
  }
  const unplaced: UnplacedOp[] = [];
  if (deadlineSlot !== -1) {
    const limit = (ops[deadlineSlot] as Operation).ret;
    for (let slot = 0; slot < required; slot++) {
      const op = ops[slot] as Operation;
      if (placed.has(slot) || !(op.call <= limit)) continue;
      const result = model.step(state, prepared[slot]);
      unplaced.push({
        id: op.id,
        description: describe(op),
        reason:
          result instanceof Inconsistent
            ? result.reason
            : 'placing it here leads to no linearization of the rest',
      });
    }
  }
  const witness: Witness = {
    prefix: [...path].map((slot) => (ops[slot] as Operation).id),
    finalState: model.describeState?.(state) ?? JSON.stringify(state),
    unplaced,
  };
  if (deadlineSlot !== -1) witness.deadline = (ops[deadlineSlot] as Operation).id;
  return witness;
}
