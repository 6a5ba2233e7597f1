import { randomUUID } from 'node:crypto';
import { type Cluster, type ClusterNode, startCluster } from '@fencekit/cluster';
import { monotonicNow } from '@fencekit/core';
import { DEFAULT_COMMAND_TIMEOUT_MS, RedisSharedLockClient } from '@fencekit/redis/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Its own server: this file stops it (SIGSTOP): the socket stays open and nothing is answered.
let cluster: Cluster;
let server: ClusterNode;
beforeAll(async () => {
  cluster = await startCluster({ topology: 'redis', nodes: 1 });
  server = cluster.nodes[0] as ClusterNode;
});
afterAll(async () => {
  await cluster?.close();
});

describe('RedisSharedLockClient with a hung server (SIGSTOP, socket open)', () => {
  it("the caller's abort ends a first attempt the server never answers, well before its command timeout", async () => {
    const client = new RedisSharedLockClient({ connection: `redis://${server.endpoint}` });
    const name = `hung-shared-${randomUUID()}`;
    try {
      // Connected and the scripts loaded while the server still answers.
      await (await client.semaphore(name, { permits: 1 }).acquire({ ttlMs: 5_000 })).release();
      await cluster.faults.pause(server.id);
      const controller = new AbortController();
      const startedAt = monotonicNow();
      const outcome = client
        .semaphore(name, { permits: 1 })
        .acquire({ ttlMs: 5_000, waitMs: 20_000, signal: controller.signal })
        .catch((error: unknown) => error);
      setTimeout(() => controller.abort(), 200);
      const error = await outcome;
      expect(error).toMatchObject({ code: 'aborted' });
      // Before the fix the abort was noticed only when the request's 5 s timeout ended it.
      expect(monotonicNow() - startedAt).toBeLessThan(DEFAULT_COMMAND_TIMEOUT_MS - 1_000);
    } finally {
      await cluster.faults.heal();
      await client.close();
    }
  });
});
