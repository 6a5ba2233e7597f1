import { type Cluster, startCluster } from '@fencekit/cluster';

/**
 * Runs the benchmark's ZooKeeper ensemble in a process of its own. The local provider relays every
 * server-to-server link through proxies in the process that started the cluster; in the measuring
 * process they would share one event loop with the clients, so any client work would also delay the
 * ensemble's own quorum traffic. Prints `{ servers, follower, leader }` as one JSON line (every
 * client talks to the same follower) and closes the ensemble on SIGTERM or when stdin ends.
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
let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await cluster.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
const leader = await cluster.leader();
const follower = cluster.nodes.find((n) => n.id !== leader) ?? cluster.nodes[0];
if (!follower) throw new Error('the ensemble has no nodes');
process.stdout.write(`${JSON.stringify({ servers: follower.endpoint, follower: follower.id, leader })}\n`);
