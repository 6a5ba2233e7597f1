import { type Cluster, serveClusterToParent, startCluster } from '@fencekit/cluster';

/**
 * Runs the benchmark's ZooKeeper ensemble in a process of its own (see `serveClusterToParent`). Prints
 * `{ servers, follower, leader }` as one JSON line: every client talks to the same follower.
 */
async function start(): Promise<Cluster> {
  // On a loaded machine an ensemble occasionally misses its first leader election in time.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster({ topology: 'zookeeper', nodes: 3 });
    } catch (error) {
      if (attempt >= 3) throw error;
      console.error(`ensemble start failed (attempt ${attempt}): ${(error as Error).message.split('\n')[0]}`);
    }
  }
}

const cluster = await start();
await serveClusterToParent(cluster, async (c) => {
  const leader = await c.leader();
  const follower = c.nodes.find((n) => n.id !== leader) ?? c.nodes[0];
  if (!follower) throw new Error('the ensemble has no nodes');
  return { servers: follower.endpoint, follower: follower.id, leader };
});
