import { isClusterInstance, isRedisInstance } from '@fencekit/redis/internal';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

describe('telling a Redis from a Cluster by shape', () => {
  it('an ioredis Cluster is a Cluster and not a Redis (it has every member isRedisInstance looks for)', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    const redis = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true });
    try {
      expect(isClusterInstance(cluster)).toBe(true);
      expect(isRedisInstance(cluster)).toBe(false);
      expect(isRedisInstance(redis)).toBe(true);
      expect(isClusterInstance(redis)).toBe(false);
    } finally {
      cluster.disconnect();
      redis.disconnect();
    }
  });

  it('options, startup nodes and URLs are neither', () => {
    for (const value of [
      { host: '127.0.0.1', port: 6379 },
      { sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'mymaster' },
      { cluster: [{ host: '127.0.0.1', port: 7000 }] },
      'redis://127.0.0.1:6379',
      null,
    ]) {
      expect(isClusterInstance(value)).toBe(false);
      expect(isRedisInstance(value)).toBe(false);
    }
  });
});
