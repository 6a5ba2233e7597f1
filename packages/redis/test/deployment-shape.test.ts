import { InvalidArgumentError } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { isClusterInstance, isRedisInstance, openConnection } from '@fencekit/redis/internal';
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

/**
 * Issue #16 review: anything holding `sendCommand` or `isCluster` that is not an ioredis Redis (a
 * Cluster where one node is needed, another client library) was spread into `new Redis({...})` as
 * if it were options: no host, no port, a connection to localhost:6379 with nobody told.
 */
describe('a client instance that cannot be used is refused, never taken for options', () => {
  /** Something shaped like another library's client (node-redis has sendCommand, no duplicate/quit). */
  class OtherClient {
    sendCommand(): Promise<unknown> {
      return Promise.resolve(null);
    }
  }

  it('openConnection refuses an ioredis Cluster and names it and what is accepted', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    let opened: ReturnType<typeof openConnection> | undefined;
    try {
      let thrown: unknown;
      try {
        opened = openConnection(cluster as unknown as Redis, {}, 'nodes[0]', 'one Redis master');
      } catch (error) {
        thrown = error;
      }
      // On the old code: no error, and a connection fencekit opened to the default host and port.
      expect(opened?.name).toBeUndefined();
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as Error).message).toBe(
        'Invalid nodes[0]: got "an ioredis Cluster", expected one Redis master',
      );
    } finally {
      opened?.redis.disconnect();
      cluster.disconnect();
    }
  });

  it('openConnection refuses any other object with sendCommand or isCluster', () => {
    for (const value of [new OtherClient(), { isCluster: false }, { sendCommand: () => undefined }]) {
      let opened: ReturnType<typeof openConnection> | undefined;
      try {
        expect(() => {
          opened = openConnection(value as unknown as Redis);
        }).toThrow(InvalidArgumentError);
      } finally {
        opened?.redis.disconnect();
      }
    }
    expect(() => openConnection(new OtherClient() as unknown as Redis)).toThrow(
      /got "a client instance \(OtherClient\) that is not an ioredis Redis", expected an ioredis Redis instance/,
    );
  });

  it('RedisLockClient refuses a client that is neither an ioredis Redis nor a Cluster, and accepts both', async () => {
    let client: RedisLockClient | undefined;
    try {
      expect(() => {
        client = new RedisLockClient({ connection: new OtherClient() as unknown as Redis });
      }).toThrow(
        /Invalid connection: got "a client instance \(OtherClient\).*an ioredis Redis or Cluster instance/,
      );
    } finally {
      await client?.close();
    }
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    const redis = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true });
    try {
      for (const connection of [cluster, redis]) {
        const accepted = new RedisLockClient({ connection });
        expect(accepted.redis).toBe(connection);
        await accepted.close();
      }
    } finally {
      cluster.disconnect();
      redis.disconnect();
    }
  });
});
