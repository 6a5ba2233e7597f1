import { randomBytes } from 'node:crypto';
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import { ClusterStartError, UnknownNodeError } from '../errors.js';
import { type ProbeTarget, waitForLeader } from '../leader.js';
import { trackCleanup, untrackCleanup } from '../local/reaper.js';
import type { LocalRecipe, NodeLayout } from '../local/recipe.js';
import { RECIPES } from '../local/recipes.js';
import { clockShimPath } from '../native.js';
import type { ResolvedOptions } from '../options.js';
import { FaultProxy } from '../proxy/proxy.js';
import type { Cluster, ClusterNode, Topology, WaitForLeaderOptions } from '../types.js';
import { poll } from '../wait.js';
import {
  configureTestcontainers,
  ensureServersImage,
  LABEL,
  nsenterPid,
  OWNER,
  OWNER_LABEL,
  removeNow,
  sweepLeftovers,
} from './engine.js';
import { DockerFaults } from './faults.js';
import { DATA_DIR, DockerNode, SHIM_IN_CONTAINER } from './node.js';
import { ContainerShell } from './shell.js';

/** Ports inside the containers: each member has its own address, so every member uses the standard ports. */
const PORTS: Readonly<Record<LocalRecipe['server'], { client: number; peers: number[] }>> = {
  redis: { client: 6379, peers: [] },
  etcd: { client: 2379, peers: [2380] },
  zookeeper: { client: 2181, peers: [2888, 3888] },
};

/** Testcontainers' GenericContainer with an init as PID 1, which reaps the servers we kill and restart. */
class ServerContainer extends GenericContainer {
  constructor(image: string) {
    super(image);
    this.hostConfig.Init = true;
  }
}

let swept: Promise<void> | undefined;

export class DockerCluster implements Cluster {
  readonly provider = 'docker';
  readonly faults: DockerFaults;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly topology: Topology,
    readonly recipe: LocalRecipe,
    readonly dockerNodes: DockerNode[],
    readonly proxies: ReadonlyMap<string, FaultProxy>,
    private readonly network: { id: string; remove: () => Promise<void> },
  ) {
    this.faults = new DockerFaults(this);
  }

  get nodes(): readonly ClusterNode[] {
    return this.dockerNodes;
  }

  /** The cluster's own Docker network. */
  get networkId(): string {
    return this.network.id;
  }

  get endpoints(): readonly string[] {
    return this.dockerNodes.map((n) => n.endpoint);
  }

  node(id: string): DockerNode {
    const node = this.dockerNodes.find((n) => n.id === id);
    if (!node)
      throw new UnknownNodeError(
        String(id),
        this.dockerNodes.map((n) => n.id),
      );
    return node;
  }

  waitForLeader(options?: WaitForLeaderOptions): Promise<string> {
    return waitForLeader(() => this.leader(), options);
  }

  leader(): Promise<string | undefined> {
    return this.recipe.leader?.(this.dockerNodes.map(directTarget)) ?? Promise.resolve(undefined);
  }

  async waitReady(
    node: DockerNode,
    timeoutMs = this.recipe.readyTimeoutMs,
    signal?: AbortSignal,
  ): Promise<void> {
    try {
      await poll(async () => ((await this.recipe.ready(directTarget(node))) ? true : undefined), {
        what: `${this.recipe.server} ${node.id} to serve`,
        timeoutMs,
        intervalMs: 250,
        signal,
      });
    } catch (error) {
      throw new ClusterStartError(node.id, (error as Error).message, await node.logTail(), { cause: error });
    }
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.faults.dispose();
      await Promise.all([...this.proxies.values()].map((p) => p.close()));
      await Promise.all(
        this.dockerNodes.map((n) => n.container.stop({ timeout: 0, remove: true }).catch(() => undefined)),
      );
      await this.network.remove().catch(() => undefined);
      untrackCleanup(this);
    })();
    return this.closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  static async start(options: ResolvedOptions): Promise<DockerCluster> {
    configureTestcontainers();
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
    trackCleanup(cleanupOwner, () =>
      removeNow(
        containers.map((c) => c.getId()),
        [network.id],
      ),
    );
    const ports = PORTS[recipe.server];
    const shim = recipe.clockShim ? clockShimPath() : undefined;
    try {
      const ids = Array.from({ length: options.nodes }, (_, i) => `n${i + 1}`);
      // Containers in parallel: each is only `sleep infinity` under an init until we start its server.
      const started = await Promise.all(
        ids.map(async (id) => {
          let container = new ServerContainer(image)
            .withNetworkMode(clusterId)
            .withExposedPorts(ports.client)
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
      const token = `fencekit-${randomBytes(6).toString('hex')}`;
      const nodes: DockerNode[] = [];
      for (const [i, layout] of layouts.entries()) {
        const container = started[i]!;
        const mapped = container.getMappedPort(ports.client);
        let endpoint = `127.0.0.1:${mapped}`;
        if (options.proxy) {
          const proxy = await FaultProxy.listen({
            name: `${layout.id} client`,
            upstreamHost: '127.0.0.1',
            upstreamPort: mapped,
          });
          proxies.set(layout.id, proxy);
          endpoint = proxy.endpoint;
        }
        const addresses = container.getNetworkNames().map((name) => container.getIpAddress(name));
        const shell = new ContainerShell(container, nsenterPid(container.getId()));
        const spec = recipe.launch(layout, layouts, token);
        nodes.push(
          new DockerNode(layout, container, shell, addresses, mapped, spec, shim !== undefined, endpoint),
        );
      }
      const cluster = new DockerCluster(options.topology, recipe, nodes, proxies, {
        id: network.id,
        remove: () => client.network.remove(network),
      });
      untrackCleanup(cleanupOwner);
      trackCleanup(cluster, () =>
        removeNow(
          nodes.map((n) => n.containerId),
          [network.id],
        ),
      );
      try {
        await Promise.all(nodes.map((n) => n.writeFiles()));
        await Promise.all(nodes.map((n) => n.startServer()));
        const deadline = AbortSignal.timeout(options.startTimeoutMs);
        const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
        await Promise.all(
          nodes.map((n) =>
            cluster.waitReady(n, Math.min(recipe.readyTimeoutMs, options.startTimeoutMs), signal),
          ),
        );
        return cluster;
      } catch (error) {
        await cluster.close();
        throw error;
      }
    } catch (error) {
      await Promise.all([...proxies.values()].map((p) => p.close()));
      await Promise.all(containers.map((c) => c.stop({ timeout: 0, remove: true }).catch(() => undefined)));
      await client.network.remove(network).catch(() => undefined);
      untrackCleanup(cleanupOwner);
      throw error;
    }
  }
}

/** Probes go to the mapped port directly, never through the client proxy. */
function directTarget(node: DockerNode): ProbeTarget {
  return { id: node.id, host: '127.0.0.1', port: node.mappedClientPort };
}
