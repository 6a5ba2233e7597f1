import type { Operation } from '../src/history/index.js';
import { type AnyModel, Inconsistent } from '../src/models/index.js';

/**
 * A deliberately naive linearizability check to cross-check the optimised search: plain recursion
 * with no pruning, remembering failed (placed set, state) pairs as strings — none of the typed-array
 * bitsets, windows, hashes or greedy rules of the real search. Completed ops must be placed; ops
 * with ret = Infinity may be placed or not.
 */
export function referenceLinearizable(ops: readonly Operation[], model: AnyModel): boolean {
  const live = ops.filter((op) => op.status !== 'fail');
  const prepared = live.map((op) => model.prepare(op));
  const placed = new Array<boolean>(live.length).fill(false);
  const required = (i: number) => (live[i] as Operation).ret !== Number.POSITIVE_INFINITY;
  const failed = new Set<string>();
  const go = (state: unknown): boolean => {
    const key = `${placed.map((p) => (p ? '1' : '0')).join('')}|${JSON.stringify(state, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`;
    if (failed.has(key)) return false;
    const ok = explore(state);
    if (!ok) failed.add(key);
    return ok;
  };
  const explore = (state: unknown): boolean => {
    const pending = live.map((_, i) => i).filter((i) => !placed[i]);
    if (pending.every((i) => !required(i))) return true;
    for (const i of pending) {
      const op = live[i] as Operation;
      if (pending.some((j) => required(j) && (live[j] as Operation).ret < op.call)) continue;
      const next = model.step(state, prepared[i]);
      if (next instanceof Inconsistent) continue;
      placed[i] = true;
      const ok = go(next);
      placed[i] = false;
      if (ok) return true;
    }
    return false;
  };
  return go(model.init());
}
