import { startCluster } from '@fencekit/cluster';
import { sleep } from '@fencekit/core';
import { expect, it } from 'vitest';
import { zookeeperMode } from '../src/probes.js';

/** Each member's `srvr` Mode (leader, follower, or undefined while electing or unreachable). */
async function modes(endpoints: readonly string[]): Promise<(string | undefined)[]> {
  return Promise.all(
    endpoints.map((e) => {
      const [host, port] = e.split(':') as [string, string];
      return zookeeperMode(host, Number(port), 1000).catch(() => undefined);
    }),
  );
}

it('a ZooKeeper leader whose clock jumped +20 s settles into one agreed leader soon after the heal', async () => {
  const cluster = await startCluster({ topology: 'zookeeper', nodes: 3 });
  try {
    const direct = cluster.nodes.map((n) => n.directEndpoint);
    const leader = await cluster.waitForLeader({ timeoutMs: 30_000 });
    await cluster.faults.clock(leader, { offsetMs: 20_000 });
    await sleep(3_000);
    await cluster.faults.heal();
    const healed = performance.now();
    // Settled: one leader and followers, the same answer three polls in a row.
    let settledAt: number | undefined;
    let streak = 0;
    let last = '';
    while (performance.now() - healed < 20_000) {
      const now = await modes(direct);
      const shape = now.join(',');
      const agreed =
        now.filter((m) => m === 'leader').length === 1 &&
        now.every((m) => m === 'leader' || m === 'follower');
      streak = agreed && shape === last ? streak + 1 : agreed ? 1 : 0;
      last = shape;
      if (streak >= 3) {
        settledAt = performance.now();
        break;
      }
      await sleep(250);
    }
    console.log(
      `[zk clock] settled ${settledAt === undefined ? 'never' : `${Math.round(settledAt - healed)} ms`} after heal: ${last}`,
    );
    expect(settledAt).toBeDefined();
    expect(settledAt! - healed).toBeLessThan(8_000);
  } finally {
    await cluster.close();
  }
}, 120_000);
