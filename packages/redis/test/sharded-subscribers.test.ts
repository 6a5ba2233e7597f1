import type { EventEmitter } from 'node:events';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  shardedSubscriberInternals,
  sweepShardedSubscribers,
  watchShardedSubscribers,
} from '../src/sharded-subscribers.js';

/**
 * sharded-subscribers.ts reaches into ioredis' private Cluster fields (5.9.x). These fail when an ioredis
 * upgrade changes them, instead of close() silently leaving timers again (cluster-close.integration.test.ts).
 */
function lazyCluster(): Cluster {
  // Never connects: a port nothing listens on, and lazyConnect.
  const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
    shardedSubscribers: true,
    lazyConnect: true,
  });
  cluster.on('error', () => undefined);
  return cluster;
}

describe('ioredis internals used by sharded-subscribers.ts', () => {
  it('a Cluster with shardedSubscribers has its subscriber group (a Map) and one connect-failure handler', () => {
    const cluster = lazyCluster();
    try {
      const internals = shardedSubscriberInternals(cluster);
      expect(internals).toBeDefined();
      expect(internals?.group).toBeInstanceOf(Map);
      expect(internals?.emitter.listeners('subscriberConnectFailed')).toHaveLength(1);
    } finally {
      cluster.disconnect();
    }
  });

  it('the refresh a failed connect schedules runs on a timer of ours, which the sweep clears', async () => {
    const cluster = lazyCluster();
    const errors: unknown[] = [];
    cluster.on('error', (error: unknown) => errors.push(error));
    try {
      watchShardedSubscribers(cluster);
      const emitter = shardedSubscriberInternals(cluster)?.emitter as EventEmitter;
      expect(emitter.listeners('subscriberConnectFailed')).toHaveLength(1);
      emitter.emit('subscriberConnectFailed', { delay: 30, error: new Error('connect failed') });
      // ioredis' handler reports the error when it runs: not yet (it waits for our timer).
      expect(errors).toHaveLength(0);
      const sweep = sweepShardedSubscribers(cluster);
      cluster.disconnect();
      await sweep.finish(100);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(errors).toHaveLength(0);
    } finally {
      cluster.disconnect();
    }
  });
});
