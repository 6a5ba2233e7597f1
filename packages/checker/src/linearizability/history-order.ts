import type { Operation } from '../history/types.js';

/**
 * One partition's ops laid out for the search. Slots `[0, required)` are ops that completed (they
 * must be linearized before their return); slots `[required, n)` have unknown outcomes (`ret =
 * Infinity`) and may be linearized anywhere after their call, or never. Failed ops are left out.
 *
 * Completed ops live in an entry list: a call entry per slot (node = slot) and a return entry
 * (node = n + slot), ordered by time with calls before returns at equal times (touching intervals
 * count as concurrent); `head` (node 2n) starts it, -1 ends it. Optional ops live in their own list
 * ordered by call (`optNext`/`optPrev`, head `optHead`), tried only after the completed ones: an op
 * that may never have happened is the last thing worth guessing.
 */
export interface SearchLayout {
  ops: Operation[];
  required: number;
  next: Int32Array;
  prev: Int32Array;
  head: number;
  optNext: Int32Array;
  optPrev: Int32Array;
  optHead: number;
  /** call time per slot, and ret time per return node (n + slot), for the optional ops' enabling limit. */
  call: Float64Array;
  ret: Float64Array;
}

export function layoutHistory(partitionOps: readonly Operation[]): SearchLayout {
  const live = partitionOps.filter((op) => op.status !== 'fail');
  const byCall = (a: Operation, b: Operation) => a.call - b.call || a.id - b.id;
  const required = live.filter((op) => op.ret !== Number.POSITIVE_INFINITY).sort(byCall);
  const optional = live.filter((op) => op.ret === Number.POSITIVE_INFINITY).sort(byCall);
  const ops = [...required, ...optional];
  const n = ops.length;
  const R = required.length;
  const nodes: { node: number; time: number; isReturn: number }[] = [];
  for (let slot = 0; slot < R; slot++) {
    const op = ops[slot] as Operation;
    nodes.push({ node: slot, time: op.call, isReturn: 0 }, { node: n + slot, time: op.ret, isReturn: 1 });
  }
  nodes.sort((a, b) => a.time - b.time || a.isReturn - b.isReturn || a.node - b.node);
  const head = 2 * n;
  const next = new Int32Array(2 * n + 1).fill(-1);
  const prev = new Int32Array(2 * n + 1).fill(-1);
  let last = head;
  for (const { node } of nodes) {
    next[last] = node;
    prev[node] = last;
    last = node;
  }
  const optHead = n;
  const optNext = new Int32Array(n + 1).fill(-1);
  const optPrev = new Int32Array(n + 1).fill(-1);
  last = optHead;
  for (let slot = R; slot < n; slot++) {
    optNext[last] = slot;
    optPrev[slot] = last;
    last = slot;
  }
  const call = new Float64Array(n);
  const ret = new Float64Array(2 * n);
  for (let slot = 0; slot < n; slot++) {
    call[slot] = (ops[slot] as Operation).call;
    ret[n + slot] = (ops[slot] as Operation).ret;
  }
  return { ops, required: R, next, prev, head, optNext, optPrev, optHead, call, ret };
}
