import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { attachCluster, startCluster, type Topology } from '@fencekit/cluster';
import { dockerAnswers } from '../run/provider.js';
import type { BackendName, Deployment, Provider, SshDeploy } from './types.js';

/**
 * Starts real servers through @fencekit/cluster, always with the fault proxy in front of each node so
 * client-side faults (cut-clients, latency) are available, and hands them to the harness as a deployment.
 */
export async function deployCluster(
  backend: BackendName,
  topology: Topology,
  nodes: number,
  provider: Exclude<Provider, 'external'>,
  signal?: AbortSignal,
  ssh?: SshDeploy,
): Promise<Deployment> {
  // The run options refuse --provider ssh without --nodes; this only guards a caller of this function.
  if (provider === 'ssh' && !ssh) throw new Error('--provider ssh needs --nodes');
  const cluster = await startCluster({
    topology,
    ...(provider === 'ssh' && ssh
      ? {
          nodes: ssh.nodes,
          ssh: {
            ...(ssh.user ? { user: ssh.user } : {}),
            ...(ssh.keyPath ? { keyPath: ssh.keyPath } : {}),
            ...(ssh.port ? { port: ssh.port } : {}),
            ...(ssh.hostKeys ? { hostKeys: ssh.hostKeys } : {}),
            ...(ssh.knownHostsFile ? { knownHostsFile: ssh.knownHostsFile } : {}),
            ...(ssh.collectDir ? { collectDir: ssh.collectDir } : {}),
          },
        }
      : { nodes }),
    provider,
    proxy: true,
    // Replicated Redis forms slowly on a loaded machine (a redis-cluster start took over 30 s at load 60).
    ...(topology === 'redis-sentinel' || topology === 'redis-cluster' ? { startTimeoutMs: 90_000 } : {}),
    ...(signal ? { signal } : {}),
  });
  return {
    backend,
    provider,
    endpoints: [...cluster.endpoints, ...replicationEndpoints(cluster)],
    nodes: cluster.nodes.map((n) => n.id),
    faults: cluster.faults,
    leader: () => cluster.leader(),
    close: () => cluster.close(),
  };
}

/**
 * Attaches to servers someone else runs (`--provider external --endpoints …`): a fault proxy in front of each
 * endpoint on this host, nothing started, nothing installed, nothing wiped. Only client-side faults apply (the run
 * refuses the others before it starts; @fencekit/cluster refuses them again by name), and `close` closes the proxies.
 */
export async function attachExternal(
  backend: BackendName,
  topology: Topology,
  endpoints: readonly string[],
  signal?: AbortSignal,
): Promise<Deployment> {
  const cluster = await attachCluster({ topology, endpoints, ...(signal ? { signal } : {}) });
  return {
    backend,
    provider: 'external',
    endpoints: [...cluster.endpoints],
    nodes: cluster.nodes.map((n) => n.id),
    faults: cluster.faults,
    leader: () => cluster.leader(),
    close: () => cluster.close(),
  };
}

/**
 * What a client of replicated Redis needs besides the data nodes' endpoints, carried in the endpoint list (the
 * one thing client processes are handed): `sentinel=<json>` (redis-sentinel: master name and Sentinels) and
 * `natmap=<json>` (announced address → client endpoint). See redis-replicated.ts, which reads them back.
 */
function replicationEndpoints(cluster: Awaited<ReturnType<typeof startCluster>>): string[] {
  const extra: string[] = [];
  if (cluster.sentinel) extra.push(`sentinel=${JSON.stringify(cluster.sentinel)}`);
  if (cluster.natMap) extra.push(`natmap=${JSON.stringify(cluster.natMap)}`);
  return extra;
}

/** Where to find the servers the local provider runs, and how to install them. */
const SERVERS: Record<Topology, { need: string[]; install: string }> = {
  redis: { need: ['bin:redis-server'], install: 'apt-get install redis-server' },
  'redis-independent': { need: ['bin:redis-server'], install: 'apt-get install redis-server' },
  'redis-sentinel': { need: ['bin:redis-server'], install: 'apt-get install redis-server' },
  'redis-cluster': { need: ['bin:redis-server'], install: 'apt-get install redis-server' },
  etcd: { need: ['bin:etcd'], install: 'apt-get install etcd-server' },
  zookeeper: {
    need: ['bin:java', 'file:/usr/share/java/zookeeper.jar'],
    install: 'apt-get install zookeeper default-jre-headless',
  },
};

/** Throws a message naming the missing server binary (local) or Docker engine (docker), and the fix. */
export async function preflightCluster(topology: Topology, provider: Provider): Promise<void> {
  // Nothing is installed or started for servers someone else runs: attaching checks that each one answers.
  if (provider === 'external') return;
  // The servers are installed on the nodes, as needed, when the cluster starts; here only ssh itself is needed.
  if (provider === 'ssh') {
    if (!onPath('ssh'))
      throw new Error('ssh not found, needed for --provider ssh: apt-get install openssh-client');
    return;
  }
  if (provider === 'docker') {
    if (!(await dockerAnswers())) {
      throw new Error(
        'no Docker engine answers: install and start it (apt-get install docker.io && dockerd &), or use --provider local',
      );
    }
    return;
  }
  const { need, install } = SERVERS[topology];
  for (const item of need) {
    const [kind, name] = item.split(':') as [string, string];
    const found = kind === 'file' ? existsSync(name) : onPath(name);
    if (!found)
      throw new Error(`${name} not found, needed for ${topology} servers: install it with \`${install}\``);
  }
}

function onPath(binary: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}
