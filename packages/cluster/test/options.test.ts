import { InvalidArgumentError } from '@fencekit/core';
import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { cutPairs } from '../src/partition.js';

describe('startCluster options', () => {
  it('fills the documented defaults', () => {
    expect(resolveOptions({ topology: 'etcd' })).toMatchObject({ nodes: 3, provider: 'local', proxy: false });
    expect(resolveOptions({ topology: 'redis-independent' }).nodes).toBe(5);
    expect(resolveOptions({ topology: 'zookeeper', nodes: 1 }).nodes).toBe(1);
  });

  it.each([
    [{ topology: 'mongo' }, 'topology'],
    [{ topology: 'etcd', nodes: 0 }, 'nodes'],
    [{ topology: 'etcd', nodes: 2.5 }, 'nodes'],
    [{ topology: 'redis', nodes: 3 }, 'nodes'],
    [{ topology: 'etcd', provider: 'k8s' }, 'provider'],
    [{ topology: 'etcd', proxy: 'yes' }, 'proxy'],
    [{ topology: 'etcd', startTimeoutMs: -1 }, 'startTimeoutMs'],
  ])('rejects %o naming %s', (options, field) => {
    const error = (() => {
      try {
        resolveOptions(options as never);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe(field);
  });
});

describe('partition specs', () => {
  const ids = ['n1', 'n2', 'n3', 'n4', 'n5'];

  it('isolate cuts one node from every other', () => {
    expect(cutPairs({ isolate: 'n2' }, ids)).toEqual([
      ['n2', 'n1'],
      ['n2', 'n3'],
      ['n2', 'n4'],
      ['n2', 'n5'],
    ]);
  });

  it('halves cut every pair across the groups and none inside', () => {
    const pairs = cutPairs(
      {
        halves: [
          ['n1', 'n2'],
          ['n3', 'n4', 'n5'],
        ],
      },
      ids,
    );
    expect(pairs).toHaveLength(6);
    expect(pairs).not.toContainEqual(['n1', 'n2']);
  });

  it('rejects unknown ids and overlapping halves', () => {
    expect(() => cutPairs({ isolate: 'n9' }, ids)).toThrow(InvalidArgumentError);
    expect(() => cutPairs({ halves: [['n1'], ['n1', 'n2']] }, ids)).toThrow(/disjoint/);
    expect(() => cutPairs({} as never, ids)).toThrow(/isolate/);
  });
});
