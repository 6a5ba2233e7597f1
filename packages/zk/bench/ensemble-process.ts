import { type Cluster, serveClusterToParent, startCluster } from '@fencekit/cluster';

/**
 * Runs the benchmark's ZooKeeper ensemble in a process of its own (see `serveClusterToParent`). Prints
 * `{ servers, follower, leader }` as one JSON line: every client talks to the same follower.
 */
async function start(): Promise<Cluster> {
  // On a loaded machine an ensemble occasionally misses its first leader election in time. startCluster
  // retries only a lost port (EADDRINUSE: fresh ports, at most 3 attempts); a member that never became
  // ready is a start failure it reports, not retries, so that retry does not cover this one. The zk
  // tests retry the same way (test/support/retry.ts), outside this bench's tsconfig (bench/ only).
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
