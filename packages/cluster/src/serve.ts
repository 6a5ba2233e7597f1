import type { Cluster } from './types.js';

/**
 * Keeps `cluster` up for a parent process and closes it when the parent is done: on SIGTERM, or when
 * stdin ends (the parent exited or closed the pipe, even if it was SIGKILLed). Writes `describe(cluster)`
 * as one JSON line on stdout once the cluster is up, for the parent to read its endpoints from.
 *
 * Benchmarks run their cluster this way, in a process of its own: the local provider relays the servers'
 * peer links through proxies in the process that started the cluster, and sharing that event loop with
 * the measured clients would slow the cluster's own quorum traffic whenever the clients work.
 */
export async function serveClusterToParent(
  cluster: Cluster,
  describe: (cluster: Cluster) => unknown | Promise<unknown>,
): Promise<void> {
  let closing = false;
  const stop = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    await cluster.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify(await describe(cluster))}\n`);
}
