import { randomUUID } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { QuorumError } from '@fencekit/core';
import { RedlockClient } from '@fencekit/redlock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Its own five nodes: this file kills some of them.
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ topology: 'redis-independent', nodes: 5 });
});
afterAll(async () => {
  await cluster?.close();
});

describe('RedlockClient with nodes down', () => {
  it('grants with 2 of 5 nodes down and fails with a QuorumError naming the nodes with 3 down', async () => {
    const client = new RedlockClient({
      nodes: cluster.endpoints.map((e) => `redis://${e}`),
      nodeTimeoutMs: 250,
    });
    try {
      const [n1, n2, n3] = cluster.nodes;
      if (!n1 || !n2 || !n3) throw new Error('expected 5 nodes');
      // Connect to all five first, so the failures below are real node failures.
      await (await client.acquire(`warm-${randomUUID()}`, { ttlMs: 1_000 })).release();

      await cluster.faults.kill(n1.id);
      await cluster.faults.kill(n2.id);
      const lease = await client.acquire(`two-down-${randomUUID()}`, { ttlMs: 5_000, waitMs: 2_000 });
      expect(lease.held).toBe(true);
      await lease.release();

      await cluster.faults.kill(n3.id);
      const failure = await client
        .acquire(`three-down-${randomUUID()}`, { ttlMs: 5_000, waitMs: 300 })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(QuorumError);
      const quorum = failure as QuorumError;
      expect(quorum.needed).toBe(3);
      expect(quorum.outcomes.filter((o) => o.ok)).toHaveLength(2);
      expect(quorum.failed.map((o) => o.node).sort()).toEqual([n1.endpoint, n2.endpoint, n3.endpoint].sort());
      for (const node of [n1, n2, n3]) expect(quorum.message).toContain(node.endpoint);
      // Each failed node says why, in words an operator can act on.
      for (const outcome of quorum.failed) expect(outcome.reason).toMatch(/not connected|ECONNREFUSED/);
    } finally {
      await client.close();
    }
  });
});
