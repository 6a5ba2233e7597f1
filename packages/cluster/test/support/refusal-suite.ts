import { NodeNotRunningError, type ProviderName, UnsupportedFaultError } from '@fencekit/cluster';
import { expect, it } from 'vitest';
import { withRedis } from './clients.js';
import { withCluster } from './cluster-scope.js';

/** Redis' TIME in milliseconds: the server's own wall clock, as the shim shows it. */
async function serverTimeMs(endpoint: string): Promise<number> {
  return withRedis(endpoint, {}, async (redis) => {
    const [seconds, micros] = (await redis.time()) as [string | number, string | number];
    return Number(seconds) * 1000 + Number(micros) / 1000;
  });
}

/**
 * A fault the cluster cannot apply is refused with the reason, never reported as done: on both providers the same
 * calls fail the same way, and the servers show that nothing happened.
 */
export function refusalSuite(provider: ProviderName): void {
  it('a partition of independent Redis masters (no peer links) is refused, and every master still answers', () =>
    withCluster({ topology: 'redis-independent', nodes: 2, provider }, async (cluster) => {
      await expect(cluster.faults.partition({ isolate: 'n1' })).rejects.toThrow(UnsupportedFaultError);
      await expect(cluster.faults.partition({ halves: [['n1'], ['n2']] })).rejects.toThrow(
        /never talk to each other/,
      );
      // A bad spec is still a bad argument, not an unsupported fault.
      await expect(cluster.faults.partition({ isolate: 'n9' })).rejects.toThrow(/partition\.isolate/);
      for (const endpoint of cluster.endpoints) {
        await withRedis(endpoint, { commandTimeout: 1000 }, async (redis) => {
          expect(await redis.ping()).toBe('PONG');
        });
      }
    }));

  it('clock faults without the clock shim are refused, and the server clock does not move', () =>
    withCluster({ topology: 'redis', provider, clockShim: false }, async (cluster) => {
      const endpoint = cluster.endpoints[0]!;
      await expect(cluster.faults.clock('n1', { offsetMs: 60_000 })).rejects.toThrow(UnsupportedFaultError);
      await expect(cluster.faults.clock('n1', { offsetMs: 0, rate: 3 })).rejects.toThrow(
        /without the clock shim/,
      );
      expect(Math.abs((await serverTimeMs(endpoint)) - Date.now())).toBeLessThan(5_000);
      await cluster.faults.heal();
    }));

  it('kill, pause or resume of a server that is not running is refused; the node is not recorded as paused', () =>
    withCluster({ topology: 'redis', provider }, async (cluster) => {
      await cluster.faults.kill('n1');
      await expect(cluster.faults.pause('n1')).rejects.toThrow(NodeNotRunningError);
      await expect(cluster.faults.kill('n1')).rejects.toThrow(NodeNotRunningError);
      await expect(cluster.faults.resume('n1')).rejects.toThrow(/not running/);
      // heal restarts the killed server; had the refused pause been recorded, it would now be frozen.
      await cluster.faults.heal();
      await withRedis(cluster.endpoints[0]!, { commandTimeout: 2000 }, async (redis) => {
        expect(await redis.ping()).toBe('PONG');
      });
      await cluster.faults.pause('n1');
      await cluster.faults.pause('n1'); // already stopped: still a running process, idempotent
      await cluster.faults.resume('n1');
      await withRedis(cluster.endpoints[0]!, { commandTimeout: 2000 }, async (redis) => {
        expect(await redis.ping()).toBe('PONG');
      });
    }));
}
