import { describe, expect, it } from 'vitest';
import { entryPrefix, queueOrder, segmentFor, sequenceOf } from '../src/paths.js';

describe('paths', () => {
  it('escapes every name to one valid, distinct znode segment', () => {
    expect(segmentFor('orders/42')).toBe('orders%2F42');
    expect(segmentFor('.')).toBe('%2E');
    expect(segmentFor('..')).toBe('%2E%2E');
    expect(segmentFor('a%2Fb')).not.toBe(segmentFor('a/b'));
  });

  it('orders entries by their ZooKeeper sequence, ignoring foreign children', () => {
    const a = `${entryPrefix('aaa', 'lock')}0000000012`;
    const b = `${entryPrefix('bbb', 'lock')}0000000003`;
    expect(sequenceOf(a)).toBe(12);
    expect(sequenceOf('not-ours')).toBe(-1);
    expect(queueOrder([a, 'not-ours', b])).toEqual([b, a]);
  });
});
