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
  if (resolved.provider === 'ssh' && resolved.ssh) {
    const { SshCluster } = await import('./ssh/cluster.js');
    return SshCluster.start(resolved, resolved.ssh);
  }
  return startLocal(resolved);
}

/** Starts afresh after a port race or a member that died while booting, at most this many times in all. */
const START_ATTEMPTS = 3;

/**
 * The local provider picks free ports, releases them, and the servers bind them a moment later: another
 * process can take one in between (seen with etcd while a whole test suite starts servers at once). A member
 * can also die while booting for a reason not its own (CI saw one ZooKeeper JVM of three exit during start, once
 * in a suite of 130 files, on a machine running many servers; it never recurred in 12 quiet starts). Either
 * start fails cleanly (torn down), so it is tried again on new ports and a new data dir, saying why on stderr:
 * a member that dies every time still fails the start, with its log.
 */
async function startLocal(resolved: ReturnType<typeof resolveOptions>): Promise<Cluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await LocalCluster.start(resolved);
    } catch (error) {
      if (!isTransientStartFailure(error) || attempt >= START_ATTEMPTS || resolved.signal?.aborted)
        throw error;
      process.stderr.write(
        `[@fencekit/cluster] ${resolved.topology} start attempt ${attempt} failed, trying again on fresh ports: ${error.message}\n`,
      );
    }
  }
}

/** A port taken in between, or a member process that exited while booting (not a timeout, not an abort). */
export function isTransientStartFailure(error: unknown): error is ClusterStartError {
  if (!(error instanceof ClusterStartError)) return false;
  return /address already in use|EADDRINUSE/i.test(error.logTail) || error.reason === 'the process exited';
}
