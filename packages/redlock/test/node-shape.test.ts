import { InvalidArgumentError, RedlockClient } from '@fencekit/redlock';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

/**
 * Issue #16 review: an ioredis Cluster given as a node was taken for connection options and spread
 * into `new Redis({...})`: no host, no port, so Redlock locked on localhost:6379 instead. Redlock's
 * nodes are independent masters; a Cluster (or any client that is not an ioredis Redis) is refused.
 */
describe('RedlockClient nodes that are not one Redis master', () => {
  it('an ioredis Cluster as a node is refused, naming the node and what is accepted, before anything opens', async () => {
    const good = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true });
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    let client: RedlockClient | undefined;
    let thrown: unknown;
    try {
      try {
        client = new RedlockClient({ nodes: [good, cluster as unknown as Redis, { port: 1 }] });
      } catch (error) {
        thrown = error;
      }
      // On the old code: a client whose second node was localhost:6379.
      expect(client?.nodeNames).toBeUndefined();
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as InvalidArgumentError).argument).toBe('nodes[1]');
      expect((thrown as Error).message).toBe(
        'Invalid nodes[1]: got "an ioredis Cluster", expected one independent Redis master: ' +
          'an ioredis Redis instance (not a Cluster), ioredis connection options or a redis:// URL',
      );
      // The caller's other instance was not touched: no connection was attempted on it.
      expect(good.status).toBe('wait');
    } finally {
      await client?.close();
      good.disconnect();
      cluster.disconnect();
    }
  });

  it('another client shape (sendCommand, not an ioredis Redis) is refused too; options and URLs are accepted', async () => {
    class OtherClient {
      sendCommand(): Promise<unknown> {
        return Promise.resolve(null);
      }
    }
    expect(() => new RedlockClient({ nodes: [new OtherClient() as unknown as Redis] })).toThrow(
      /Invalid nodes\[0\]: got "a client instance \(OtherClient\) that is not an ioredis Redis"/,
    );
    const client = new RedlockClient({
      nodes: [{ host: '127.0.0.1', port: 1, lazyConnect: true }, 'redis://127.0.0.1:2'],
    });
    try {
      expect(client.nodeNames).toEqual(['127.0.0.1:1', '127.0.0.1:2']);
    } finally {
      await client.close();
    }
  });
});
