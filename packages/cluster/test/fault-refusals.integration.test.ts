import { dockerAvailable, unsupportedFaults } from '@fencekit/cluster';
import { describe, expect, it } from 'vitest';
import { refusalSuite } from './support/refusal-suite.js';

describe('which faults a cluster shape cannot apply', () => {
  it('names the reason for each, and nothing for faults that take effect', () => {
    expect(unsupportedFaults({ topology: 'redis-independent' }).partition).toMatch(/never talk/);
    expect(unsupportedFaults({ topology: 'redis' }).partition).toMatch(/never talk/);
    expect(unsupportedFaults({ topology: 'etcd', nodes: 1 }).partition).toMatch(/single server/);
    expect(unsupportedFaults({ topology: 'etcd', nodes: 3 }).clock).toMatch(/vDSO/);
    expect(unsupportedFaults({ topology: 'zookeeper', clockShim: false }).clock).toMatch(
      /without the clock shim/,
    );
    // ZooKeeper has no replica to promote: only the promotion faults are refused.
    expect(
      Object.keys(unsupportedFaults({ topology: 'zookeeper', nodes: 3, clockShim: true })).sort(),
    ).toEqual(['failover', 'splitBrain']);
    expect(unsupportedFaults({ topology: 'zookeeper' }).failover).toMatch(/no replica to promote/);
    expect(unsupportedFaults({ topology: 'redis-sentinel', clockShim: true })).toEqual({});
    expect(unsupportedFaults({ topology: 'redis-cluster', clockShim: true })).toEqual({});
  });
});

describe('local provider: refused faults', () => refusalSuite('local'));

const engine = await dockerAvailable();
if (!engine) console.warn('[cluster] docker refusal tests SKIPPED: no Docker engine answers `docker info`');
describe.skipIf(!engine)(`docker provider: refused faults${engine ? '' : ' (skipped: no engine)'}`, () =>
  refusalSuite('docker'),
);
