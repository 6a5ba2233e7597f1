import { InvalidArgumentError } from '@fencekit/core';
import { EndpointUnreachableError, UnknownNodeError } from '../errors.js';
import { ClientProxies } from '../faults/client-proxies.js';
import { type ProbeTarget, waitForLeader } from '../leader.js';
import type { LocalRecipe } from '../local/recipe.js';
import { RECIPES } from '../local/recipes.js';
import { DEFAULT_NODES } from '../options.js';
import { FaultProxy } from '../proxy/proxy.js';
import type { Cluster, ClusterNode, Topology, WaitForLeaderOptions } from '../types.js';
import { poll } from '../wait.js';
import { type ExternalEndpoint, parseEndpoints } from './endpoints.js';
import { ExternalFaults } from './faults.js';

export interface ExternalClusterOptions {
  /** What the servers are: `redis` (one endpoint), `redis-independent`, `etcd` or `zookeeper`. */
  readonly topology: Topology;
  /** Each server's client endpoint, `host:port` (the nodes are n1, n2, … in this order). */
  readonly endpoints: readonly string[];
  /** Bound on the wait until every endpoint answers its server's own readiness request (default 30 s). */
  readonly readyTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Topologies whose clients follow addresses the servers announce (Sentinel, MOVED): past any proxy of ours. */
const FOLLOWS_ANNOUNCED: Partial<Record<Topology, string>> = {
  'redis-sentinel': 'its clients follow the addresses the Sentinels announce, past the fault proxy',
  'redis-cluster': 'its clients follow the addresses in CLUSTER SLOTS and MOVED, past the fault proxy',
};
const MAX_ENDPOINTS = 7;

interface ExternalNode extends ClusterNode {
  readonly upstream: ExternalEndpoint;
}

/**
 * Servers someone else runs (a shared etcd, a managed Redis), reached through a fault proxy per endpoint on this
 * host. fencekit never starts, stops, restarts, wipes or signals them, and faults only the clients' path: see
 * `attachCluster`.
 */
class ExternalCluster implements Cluster {
  readonly provider = 'external' as const;
  readonly faults: ExternalFaults<ExternalNode>;
  private closed: Promise<void> | undefined;

  constructor(
    readonly topology: Topology,
    private readonly recipe: LocalRecipe,
    private readonly members: readonly ExternalNode[],
    private readonly proxies: ClientProxies,
  ) {
    this.faults = new ExternalFaults<ExternalNode>(
      {
        topology,
        // No server fault is ever applied here (ExternalFaults refuses them by name).
        unsupported: {},
        nodes: members,
        members,
        recipe,
        node: (id) => this.node(id),
        probeTarget: (n) => this.probeTarget(n),
        waitReady: (n) => this.waitReady(n, 30_000),
        replication: undefined,
      },
      proxies,
    );
  }

  get nodes(): readonly ClusterNode[] {
    return this.members;
  }

  get endpoints(): readonly string[] {
    return this.members.map((n) => n.endpoint);
  }

  node(id: string): ExternalNode {
    const node = this.members.find((n) => n.id === id);
    if (!node)
      throw new UnknownNodeError(
        String(id),
        this.members.map((n) => n.id),
      );
    return node;
  }

  /** The server itself, never through the proxy: a fault on the clients' path must not hide it. */
  probeTarget(node: ExternalNode): ProbeTarget {
    return { id: node.id, host: node.upstream.host, port: node.upstream.port };
  }

  leader(): Promise<string | undefined> {
    return this.recipe.leader?.(this.members.map((n) => this.probeTarget(n))) ?? Promise.resolve(undefined);
  }

  async primaries(): Promise<string[]> {
    const leader = await this.leader();
    return leader === undefined ? [] : [leader];
  }

  waitForLeader(options?: WaitForLeaderOptions): Promise<string> {
    return waitForLeader(() => this.leader(), options);
  }

  /** Read-only requests (etcd `/health`, Redis `PING`, ZooKeeper `srvr`) until the server answers, bounded. */
  async waitReady(node: ExternalNode, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    try {
      await poll(async () => ((await this.recipe.ready(this.probeTarget(node))) ? true : undefined), {
        what: `${node.upstream.text} to serve`,
        timeoutMs,
        intervalMs: 250,
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new EndpointUnreachableError(node.id, node.upstream.text, (error as Error).message, {
        cause: error,
      });
    }
  }

  /** Closes the proxies (their connections with them); the servers are left exactly as they are. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.faults.dispose();
      await this.proxies.close();
    })();
    return this.closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Attaches to a cluster fencekit must not control: puts a fault proxy on this host in front of each endpoint
 * (clients use `cluster.endpoints`, the proxies) and waits until every server answers a read-only readiness
 * request. Only client-side faults apply (`cutClients`, `cutProcess`, `latency`, `toxic`, `heal`, and their
 * `observe`); every fault on the servers throws `ServerFaultRefusedError` naming it. `close()` closes the
 * proxies and nothing else.
 */
export async function attachCluster(options: ExternalClusterOptions): Promise<Cluster> {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with a topology and endpoints');
  }
  const { topology } = options;
  if (typeof topology !== 'string' || !(topology in DEFAULT_NODES)) {
    throw new InvalidArgumentError('topology', topology, `one of ${Object.keys(DEFAULT_NODES).join(', ')}`);
  }
  const refused = FOLLOWS_ANNOUNCED[topology];
  if (refused) throw new InvalidArgumentError('topology', topology, `not ${topology}: ${refused}`);
  const upstreams = parseEndpoints('endpoints', options.endpoints, MAX_ENDPOINTS);
  if (topology === 'redis' && upstreams.length !== 1) {
    throw new InvalidArgumentError(
      'endpoints',
      options.endpoints,
      "one endpoint for 'redis' (several masters: 'redis-independent')",
    );
  }
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  if (typeof readyTimeoutMs !== 'number' || !Number.isFinite(readyTimeoutMs) || readyTimeoutMs <= 0) {
    throw new InvalidArgumentError(
      'readyTimeoutMs',
      readyTimeoutMs,
      'a positive finite number of milliseconds',
    );
  }
  options.signal?.throwIfAborted();
  const byId = new Map<string, FaultProxy>();
  const proxies = new ClientProxies(byId);
  try {
    const members = await Promise.all(
      upstreams.map(async (upstream, i): Promise<ExternalNode> => {
        const id = `n${i + 1}`;
        const proxy = await FaultProxy.listen({
          name: `${id} client`,
          upstreamHost: upstream.host,
          upstreamPort: upstream.port,
        });
        byId.set(id, proxy);
        return { id, endpoint: proxy.endpoint, directEndpoint: upstream.text, upstream };
      }),
    );
    const cluster = new ExternalCluster(topology, RECIPES[topology], members, proxies);
    // The first endpoint that fails ends the other waits too: none may outlive the failed attach.
    const failed = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, failed.signal]) : failed.signal;
    const waits = members.map((n) =>
      cluster.waitReady(n, readyTimeoutMs, signal).catch((error: unknown) => {
        failed.abort(error);
        throw error;
      }),
    );
    try {
      await Promise.all(waits);
    } catch {
      await Promise.allSettled(waits);
      await cluster.close();
      throw options.signal?.aborted ? options.signal.reason : failed.signal.reason;
    }
    return cluster;
  } catch (error) {
    await proxies.close();
    throw error;
  }
}
