import { startCluster } from '@fencekit/cluster';

/**
 * Runs the benchmark's etcd cluster (and the local provider's proxies) in a process of its own, so
 * their work never competes with the measured clients for one event loop. Prints the endpoints as
 * one JSON line; closes the cluster on SIGTERM or when the parent goes away (stdin ends).
 */
const cluster = await startCluster({ topology: 'etcd', nodes: 3, provider: 'local' });
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
process.stdout.write(`${JSON.stringify({ endpoints: cluster.endpoints })}\n`);
