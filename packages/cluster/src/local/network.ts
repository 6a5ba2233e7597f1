import { ClientProxies } from '../faults/client-proxies.js';
import { FaultProxy } from '../proxy/proxy.js';
import { sourceIdentifier } from '../proxy/source.js';

export interface NodePorts {
  readonly id: string;
  readonly clientPort: number;
  readonly peerPorts: readonly number[];
}

const pairKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`);

/**
 * The local cluster's network: an optional proxy in front of each client port, and one in front of each peer
 * port through which the other members reach it. Partitions hold the peer connections between cut pairs;
 * client cuts and toxics act on the client proxies. No root needed: it is all loopback TCP.
 */
export class LocalNetwork {
  private readonly cutPairs = new Set<string>();
  readonly clients: ClientProxies;

  private constructor(
    readonly ids: readonly string[],
    clientProxies: ReadonlyMap<string, FaultProxy>,
    readonly peerProxies: ReadonlyMap<string, readonly FaultProxy[]>,
  ) {
    this.clients = new ClientProxies(clientProxies);
  }

  static async create(
    nodes: readonly NodePorts[],
    options: { clientProxy: boolean; peerProxy: boolean },
    pids: () => ReadonlyArray<{ id: string; pid: number | undefined }>,
  ): Promise<LocalNetwork> {
    const clientProxies = new Map<string, FaultProxy>();
    const peerProxies = new Map<string, FaultProxy[]>();
    const identify = sourceIdentifier(pids);
    try {
      for (const node of nodes) {
        if (options.clientProxy)
          clientProxies.set(node.id, await ClientProxies.listen(node.id, node.clientPort));
        if (options.peerProxy) {
          const proxies: FaultProxy[] = [];
          for (const port of node.peerPorts) {
            proxies.push(
              await FaultProxy.listen({
                name: `${node.id} peer`,
                upstreamHost: '127.0.0.1',
                upstreamPort: port,
                identify,
              }),
            );
          }
          peerProxies.set(node.id, proxies);
        }
      }
    } catch (error) {
      await Promise.all(
        [...clientProxies.values(), ...[...peerProxies.values()].flat()].map((p) => p.close()),
      );
      throw error;
    }
    const network = new LocalNetwork(
      nodes.map((n) => n.id),
      clientProxies,
      peerProxies,
    );
    network.applyPeerCuts();
    return network;
  }

  /** Cuts these server-to-server links, on top of cuts already in place. */
  cutLinks(pairs: ReadonlyArray<readonly [string, string]>): void {
    for (const [a, b] of pairs) this.cutPairs.add(pairKey(a, b));
    this.applyPeerCuts();
  }

  healLinks(): void {
    this.cutPairs.clear();
    this.applyPeerCuts();
  }

  async close(): Promise<void> {
    await Promise.all([this.clients.close(), ...[...this.peerProxies.values()].flat().map((p) => p.close())]);
  }

  private applyPeerCuts(): void {
    for (const [id, proxies] of this.peerProxies) {
      for (const proxy of proxies) {
        // A caller we could not identify is still cut when this node is cut from every other one.
        const isolated = this.ids.every((other) => other === id || this.cutPairs.has(pairKey(other, id)));
        proxy.setCut((source) => (source === undefined ? isolated : this.cutPairs.has(pairKey(source, id))));
      }
    }
  }
}
