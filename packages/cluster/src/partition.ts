import { InvalidArgumentError } from '@fencekit/core';
import type { PartitionSpec } from './types.js';

/**
 * The server pairs a partition spec cuts: `isolate` cuts one node from every other, `halves` cuts every pair across
 * the two groups (nodes in neither group keep all their links). Unknown ids and overlapping halves are rejected.
 */
export function cutPairs(spec: PartitionSpec, ids: readonly string[]): Array<[string, string]> {
  const known = (id: unknown, field: string) => {
    if (typeof id !== 'string' || !ids.includes(id)) {
      throw new InvalidArgumentError(field, id, `one of ${ids.join(', ')}`);
    }
    return id;
  };
  if (typeof spec === 'object' && spec !== null && 'isolate' in spec) {
    const lonely = known(spec.isolate, 'partition.isolate');
    return ids.filter((id) => id !== lonely).map((id) => [lonely, id]);
  }
  if (typeof spec === 'object' && spec !== null && 'halves' in spec && Array.isArray(spec.halves)) {
    const [left, right] = spec.halves;
    if (!Array.isArray(left) || !Array.isArray(right)) {
      throw new InvalidArgumentError('partition.halves', spec.halves, 'two arrays of node ids');
    }
    const a = left.map((id) => known(id, 'partition.halves'));
    const b = right.map((id) => known(id, 'partition.halves'));
    if (a.some((id) => b.includes(id))) {
      throw new InvalidArgumentError('partition.halves', spec.halves, 'two disjoint groups of node ids');
    }
    return a.flatMap((x) => b.map((y): [string, string] => [x, y]));
  }
  throw new InvalidArgumentError('partition', spec, '{ isolate: id } or { halves: [ids, ids] }');
}
