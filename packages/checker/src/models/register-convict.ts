import type { Operation } from '../history/types.js';
import type { Conviction } from './model.js';
import { describeScalar, type Scalar } from './values.js';

/** An op that may have put `value` in the register; `definite` when it surely did (completed ok). */
export interface RegisterWrite {
  op: Operation;
  value: Scalar;
  definite: boolean;
}

/**
 * Two necessary conditions on every completed read of `v`, checked in O(n log n) before any search:
 * 1. some op that may write `v` was invoked before the read returned (or `v` is the initial value);
 * 2. if `v` is written by one op only, no definite write of another value falls entirely between
 *    that write's return and the read's call (it would have overwritten `v` for good).
 * Either failing convicts the read with the ops that prove it. Sound for duplicate values too: the
 * second rule only applies to values with a single writer.
 */
export function convictStaleReads(
  initial: Scalar,
  reads: readonly { op: Operation; value: Scalar }[],
  writes: readonly RegisterWrite[],
): Conviction | undefined {
  const writers = new Map<Scalar, RegisterWrite[]>();
  for (const w of writes) {
    const list = writers.get(w.value);
    if (list === undefined) writers.set(w.value, [w]);
    else list.push(w);
  }
  // Definite writes sorted by call, with the earliest return among all later-called ones.
  const definite = writes.filter((w) => w.definite).sort((x, y) => x.op.call - y.op.call);
  const suffixMinRet: number[] = new Array(definite.length + 1).fill(Number.POSITIVE_INFINITY);
  const suffixArg: number[] = new Array(definite.length + 1).fill(-1);
  for (let i = definite.length - 1; i >= 0; i--) {
    const ret = (definite[i] as RegisterWrite).op.ret;
    const better = ret < (suffixMinRet[i + 1] as number);
    suffixMinRet[i] = better ? ret : (suffixMinRet[i + 1] as number);
    suffixArg[i] = better ? i : (suffixArg[i + 1] as number);
  }
  const firstCalledAfter = (t: number): number => {
    let lo = 0;
    let hi = definite.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((definite[mid] as RegisterWrite).op.call > t) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  for (const r of reads) {
    const list = writers.get(r.value) ?? [];
    const isInitial = r.value === initial;
    if (!isInitial && !list.some((w) => w.op.call <= r.op.ret)) {
      return { reason: `read ${describeScalar(r.value)}, which no op had started writing`, opIds: [r.op.id] };
    }
    // Single source of v: the initial value alone, or one write. Where did it surely get overwritten?
    const sources = list.length + (isInitial ? 1 : 0);
    if (sources !== 1) continue;
    const sourceRet = isInitial ? Number.NEGATIVE_INFINITY : (list[0] as RegisterWrite).op.ret;
    const from = firstCalledAfter(sourceRet);
    const k = suffixArg[from] as number;
    if (k < 0) continue;
    const over = definite[k] as RegisterWrite;
    if (over.value !== r.value && over.op.ret < r.op.call) {
      const ids = isInitial ? [over.op.id, r.op.id] : [(list[0] as RegisterWrite).op.id, over.op.id, r.op.id];
      return {
        reason: `read ${describeScalar(r.value)} after it was overwritten by ${describeScalar(over.value)}`,
        opIds: ids,
      };
    }
  }
  return undefined;
}
