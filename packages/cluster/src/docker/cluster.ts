import { randomBytes } from 'node:crypto';
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import { ClientProxies } from '../faults/client-proxies.js';
import type { ProbeTarget } from '../leader.js';
import { trackCleanup, untrackCleanup } from '../local/reaper.js';
import type { LocalRecipe, NodeLayout } from '../local/recipe.js';
import { RECIPES } from '../local/recipes.js';
import { clusterToken, memberIds } from '../members.js';
import { clockShimPath } from '../native.js';
import type { ResolvedOptions } from '../options.js';
import { ProviderCluster } from '../provider-cluster.js';
import type { FaultProxy } from '../proxy/proxy.js';
import { replicationFor } from '../replication.js';
import type { Topology } from '../types.js';
import {
  configureTestcontainers,
  ensureServersImage,
  hostPort,
  LABEL,
  nsenterPid,
  OWNER,
  OWNER_LABEL,
  publishedPortsHost,
  removeNow,
  sweepLeftovers,
} from './engine.js';
import { dockerFaultPrimitives } from './faults.js';
import { DockerLinks } from './links.js';
import { DATA_DIR, DockerNode, SHIM_IN_CONTAINER } from './node.js';
import { ContainerShell } from './shell.js';

/** Ports inside the containers: each member has its own address, so every member uses the standard ports. */
const PORTS: Readonly<Record<LocalRecipe['server'], { client: number; peers: number[] }>> = {
  redis: { client: 6379, peers: [] },
  etcd: { client: 2379, peers: [2380] },
  zookeeper: { client: 2181, peers: [2888, 3888] },
};

/**
 * Replicated Redis: peers call the client port (replication, Sentinels), then the Sentinel's port (mapped to the
 * host too, for clients) or the cluster bus. No proxies: iptables cuts them between containers.
 */
function portsOf(recipe: LocalRecipe): { client: number; peers: number[]; exposed: number[] } {
  if (recipe.replication === 'sentinel')
    return { client: 6379, peers: [6379, 26379], exposed: [6379, 26379] };
  if (recipe.replication === 'cluster') return { client: 6379, peers: [6379, 16379], exposed: [6379] };
  const ports = PORTS[recipe.server];
  return { ...ports, exposed: [ports.client] };
}

/** Testcontainers' GenericContainer with an init as PID 1, which reaps the servers we kill and restart. */
class ServerContainer extends GenericContainer {
  constructor(image: string) {
    super(image);
    this.hostConfig.Init = true;
  }
}

/**
 * The exit-time clean-up: at the end (exit, or a signal nobody else handles) the containers and network go at once.
 * On a signal the process handles itself (the harness's Ctrl-C: heal, stop clients, then close()) they stay, or the
 * servers would vanish under the clients and the heal before that teardown; the exit handler still removes them.
 */
function removeAtEnd(
  final: boolean,
  containers: readonly string[],
  networks: readonly string[],
): 'keep' | undefined {
  if (!final) return 'keep';
  removeNow(containers, networks);
  return undefined;
}

let swept: Promise<void> | undefined;

/** One container per member on a network of the cluster's own; the servers are started and killed inside them. */
export class DockerCluster extends ProviderCluster<DockerNode> {
  readonly provider = 'docker';

  private constructor(
    topology: Topology,
    recipe: LocalRecipe,
    nodes: readonly DockerNode[],
    private readonly clients: ClientProxies,
    private readonly network: { id: string; remove: () => Promise<void> },
    clockShim: boolean,
  ) {
    super(topology, recipe, nodes, dockerFaultPrimitives(clients, new DockerLinks(nodes)), 250, clockShim);
  }

  /** The cluster's own Docker network. */
  get networkId(): string {
    return this.network.id;
  }

  /** Probes go to the mapped port directly, never through the client proxy. */
  probeTarget(node: DockerNode): ProbeTarget {
    return { id: node.id, host: node.portsHost, port: node.mappedClientPort };
  }

  protected logTail(node: DockerNode): Promise<string> {
    return node.logTail();
  }

  protected async teardown(): Promise<void> {
    await this.clients.close();
    await Promise.all(
      this.members.map((n) => n.container.stop({ timeout: 0, remove: true }).catch(() => undefined)),
    );
    await this.network.remove().catch(() => undefined);
    untrackCleanup(this);
  }

  static async start(options: ResolvedOptions): Promise<DockerCluster> {
    configureTestcontainers();
    // Published ports are on the engine's host: loopback here, or the host a remote DOCKER_HOST names.
    const host = publishedPortsHost();
    const recipe = RECIPES[options.topology];
    const image = await ensureServersImage();
    swept ??= sweepLeftovers().catch(() => undefined);
    await swept;
    const client = await getContainerRuntimeClient();
    const clusterId = `fencekit-${options.topology}-${randomBytes(4).toString('hex')}`;
    const labels = { [LABEL]: clusterId, [OWNER_LABEL]: OWNER };
    const network = await client.network.create({ Name: clusterId, Labels: labels, CheckDuplicate: true });
    const containers: StartedTestContainer[] = [];
    const proxies = new Map<string, FaultProxy>();
    const cleanupOwner = {};
    trackCleanup(cleanupOwner, (final) =>
      removeAtEnd(
        final,
        containers.map((c) => c.getId()),
        [network.id],
      ),
    );
    const ports = portsOf(recipe);
    const shim = recipe.clockShim && options.clockShim ? clockShimPath() : undefined;
    try {
      const ids = memberIds(options.nodes);
      // Containers in parallel: each is only `sleep infinity` under an init until we start its server.
      const started = await Promise.all(
        ids.map(async (id) => {
          let container = new ServerContainer(image)
            .withNetworkMode(clusterId)
            .withExposedPorts(...ports.exposed)
            .withLabels({ ...labels, 'fencekit.node': id })
            .withAddedCapabilities('NET_ADMIN')
            .withWaitStrategy(Wait.forAll([]))
            .withStartupTimeout(60_000);
          if (shim)
            container = container.withCopyFilesToContainer([{ source: shim, target: SHIM_IN_CONTAINER }]);
          const startedContainer = await container.start();
          containers.push(startedContainer);
          return startedContainer;
        }),
      );
      const layouts: NodeLayout[] = ids.map((id, i) => {
        const container = started[i]!;
        return {
          id,
          index: i + 1,
          dir: DATA_DIR,
          listenHost: '0.0.0.0',
          advertisedHost: container.getIpAddress(clusterId),
          clientPort: ports.client,
          advertisedClientPort: ports.client,
          peerPorts: ports.peers,
          advertisedPeerPorts: ports.peers,
        };
      });
      const token = clusterToken();
      const nodes: DockerNode[] = [];
      for (const [i, layout] of layouts.entries()) {
        const container = started[i]!;
        const mapped = container.getMappedPort(ports.client);
        let endpoint = hostPort(host, mapped);
        if (options.proxy) {
          const proxy = await ClientProxies.listen(layout.id, mapped, host);
          proxies.set(layout.id, proxy);
          endpoint = proxy.endpoint;
        }
        const addresses = container.getNetworkNames().map((name) => container.getIpAddress(name));
        const shell = new ContainerShell(container, nsenterPid(container.getId()));
        const spec = recipe.launch(layout, layouts, token);
        const node = new DockerNode(
          layout,
          container,
          shell,
          addresses,
          host,
          mapped,
          spec,
          shim !== undefined,
          endpoint,
        );
        node.companionSpec = recipe.companion?.(layout, layouts);
        nodes.push(node);
      }
      const cluster = new DockerCluster(
        options.topology,
        recipe,
        nodes,
        new ClientProxies(proxies),
        { id: network.id, remove: () => client.network.remove(network) },
        shim !== undefined,
      );
      cluster.replication = replicationFor(recipe, layouts, {
        node: (l) => ({ host, port: started[l.index - 1]!.getMappedPort(ports.client) }),
        sentinel: (l) => ({ host, port: started[l.index - 1]!.getMappedPort(l.peerPorts[1]!) }),
      });
      untrackCleanup(cleanupOwner);
      trackCleanup(cluster, (final) =>
        removeAtEnd(
          final,
          nodes.map((n) => n.containerId),
          [network.id],
        ),
      );
      await cluster.boot(options, async () => {
        await Promise.all(nodes.map((n) => n.writeFiles()));
        await Promise.all(nodes.map((n) => n.startServer()));
        await Promise.all(nodes.map((n) => n.startCompanion()));
      });
      return cluster;
    } catch (error) {
      await Promise.all([...proxies.values()].map((p) => p.close()));
      await Promise.all(containers.map((c) => c.stop({ timeout: 0, remove: true }).catch(() => undefined)));
      await client.network.remove(network).catch(() => undefined);
      untrackCleanup(cleanupOwner);
      throw error;
    }
  }
}
