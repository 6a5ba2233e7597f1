import { ProxyRequiredError } from '../errors.js';
import { cutPairs } from '../partition.js';
import { FaultProxy } from '../proxy/proxy.js';
import { sourceIdentifier } from '../proxy/source.js';
import type { PartitionSpec, Toxic } from '../types.js';

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
  private readonly clientsCut = new Set<string>();

  private constructor(
    readonly ids: readonly string[],
    readonly clientProxies: ReadonlyMap<string, FaultProxy>,
    readonly peerProxies: ReadonlyMap<string, readonly FaultProxy[]>,
  ) {}

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
        if (options.clientProxy) {
          const proxy = await FaultProxy.listen({
            name: `${node.id} client`,
            upstreamHost: '127.0.0.1',
            upstreamPort: node.clientPort,
          });
          clientProxies.set(node.id, proxy);
        }
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

  /** Cuts every server-to-server link named by the spec, on top of cuts already in place. */
  partition(spec: PartitionSpec): void {
    for (const [a, b] of cutPairs(spec, this.ids)) this.cutPairs.add(pairKey(a, b));
    this.applyPeerCuts();
  }

  cutClients(id: string): void {
    const proxy = this.clientProxy(id, 'cutClients');
    this.clientsCut.add(id);
    proxy.setCut(() => true);
  }

  addToxic(id: string, toxic: Toxic, fault = 'toxic'): void {
    this.clientProxy(id, fault).addToxic(toxic);
  }

  /** Drops the proxied client connections of a node (a killed server's connections are dead anyway). */
  dropClientConnections(id: string): void {
    this.clientProxies.get(id)?.dropConnections();
  }

  heal(): void {
    this.cutPairs.clear();
    this.applyPeerCuts();
    for (const id of this.clientsCut) this.clientProxies.get(id)?.setCut(() => false);
    this.clientsCut.clear();
    for (const proxy of this.clientProxies.values()) proxy.setToxics([]);
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.clientProxies.values(), ...[...this.peerProxies.values()].flat()].map((p) => p.close()),
    );
  }

  get hasPeerProxies(): boolean {
    return this.peerProxies.size > 0;
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

  private clientProxy(id: string, fault: string): FaultProxy {
    const proxy = this.clientProxies.get(id);
    if (!proxy) throw new ProxyRequiredError(fault);
    return proxy;
  }
}
