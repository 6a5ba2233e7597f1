import { ClusterStartError } from './errors.js';
import { LocalCluster } from './local/cluster.js';
import { resolveOptions } from './options.js';
import type { Cluster, ClusterOptions } from './types.js';

/**
 * Starts a cluster of real servers and resolves once every node serves clients (etcd has a leader, ZooKeeper
 * reports a Mode). On failure or abort, whatever was started is torn down before the promise rejects.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const resolved = resolveOptions(options);
  resolved.signal?.throwIfAborted();
  if (resolved.provider === 'docker') {
    // Loaded on demand: the local provider must work where testcontainers' dependencies are never touched.
    const { DockerCluster } = await import('./docker/cluster.js');
    return DockerCluster.start(resolved);
  }
  return startLocal(resolved);
}

/** Starts with fresh ports after a port race, at most this many times in all. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * The local provider picks free ports, releases them, and the servers bind them a moment later: another
 * process can take one in between (seen with etcd while a whole test suite starts servers at once). That
 * start fails cleanly (torn down), so it is simply tried again on new ports.
 */
async function startLocal(resolved: ReturnType<typeof resolveOptions>): Promise<Cluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await LocalCluster.start(resolved);
    } catch (error) {
      const portRace =
        error instanceof ClusterStartError && /address already in use|EADDRINUSE/i.test(error.logTail);
      if (!portRace || attempt >= PORT_RACE_ATTEMPTS || resolved.signal?.aborted) throw error;
    }
  }
}
