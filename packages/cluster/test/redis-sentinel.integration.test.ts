import { InvalidArgumentError, startCluster, UnsupportedFaultError } from '@fencekit/cluster';
import { describe, expect, it } from 'vitest';
import { sentinelSuite } from './support/sentinel-suite.js';

sentinelSuite('local');

describe('refusals', () => {
  it('failover and splitBrain are refused where there is no replica to promote', async () => {
    const single = await startCluster({ topology: 'redis' });
    try {
      await expect(single.faults.failover()).rejects.toThrow(UnsupportedFaultError);
      await expect(single.faults.splitBrain()).rejects.toThrow(/no replica to promote/);
      await expect(
        single.faults.observe({ fault: 'failover', node: 'n1', phase: 'started' }),
      ).rejects.toThrow(UnsupportedFaultError);
    } finally {
      await single.close();
    }
  });

  it('node counts the replicated topologies cannot run are bad arguments', async () => {
    await expect(startCluster({ topology: 'redis-sentinel', nodes: 2 })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(startCluster({ topology: 'redis-cluster', nodes: 3 })).rejects.toThrow(/nodes/);
  });
});
