import { InvalidArgumentError } from '@fencekit/core';
import { ClusterClosedError, ProxyRequiredError, UnsupportedFaultError } from '../errors.js';
import { cutPairs } from '../partition.js';
import { validateToxic } from '../proxy/toxics.js';
import type { ClockOptions, Faults, LatencyOptions, PartitionSpec, Toxic } from '../types.js';
import { sleep } from '../wait.js';
import type { DockerCluster } from './cluster.js';
import type { DockerNode } from './node.js';

const CHAIN = 'FENCEKIT';
const SHIM_PICKUP_MS = 20;

/**
 * The nemesis for containers: kill -9 / SIGSTOP of the server process inside its container (the container and its
 * mapped port stay), iptables in a chain of our own for partitions, the host-side proxy for client faults, the
 * clock shim for clocks.
 */
export class DockerFaults implements Faults {
  private readonly killed = new Set<string>();
  private readonly paused = new Set<string>();
  private readonly skewed = new Set<string>();
  private readonly chained = new Set<string>();
  private readonly cut = new Set<string>();
  private disposed = false;

  constructor(private readonly cluster: DockerCluster) {}

  async kill(id: string): Promise<void> {
    const node = this.target(id);
    await node.signal('KILL');
    this.killed.add(id);
    this.paused.delete(id);
    this.cluster.proxies.get(id)?.dropConnections();
  }

  async restart(id: string): Promise<void> {
    const node = this.target(id);
    await node.signal('KILL');
    await node.startServer();
    this.killed.delete(id);
    this.paused.delete(id);
    await this.cluster.waitReady(node);
  }

  async pause(id: string): Promise<void> {
    await this.target(id).signal('STOP');
    this.paused.add(id);
  }

  async resume(id: string): Promise<void> {
    await this.target(id).signal('CONT');
    this.paused.delete(id);
  }

  /** Drops, inside both containers of every cut pair, all packets to and from each of the other's addresses. */
  async partition(spec: PartitionSpec): Promise<void> {
    this.live();
    const ids = this.cluster.dockerNodes.map((n) => n.id);
    const rules = new Map<string, string[]>();
    for (const [a, b] of cutPairs(spec, ids)) {
      for (const [self, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const peer = this.cluster.node(other);
        const list = rules.get(self) ?? [];
        for (const address of peer.addresses)
          list.push(`-A ${CHAIN} -s ${address} -j DROP`, `-A ${CHAIN} -d ${address} -j DROP`);
        rules.set(self, list);
      }
    }
    await Promise.all(
      [...rules].map(async ([id, list]) => {
        const node = this.cluster.node(id);
        await this.ensureChain(node);
        await node.iptables(list);
      }),
    );
  }

  async cutClients(id: string): Promise<void> {
    this.target(id);
    this.proxy(id, 'cutClients').setCut(() => true);
    this.cut.add(id);
  }

  async latency(id: string, options: LatencyOptions): Promise<void> {
    this.target(id);
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('latency options', options, '{ ms, jitterMs?, direction? }');
    }
    const toxic: Toxic = {
      type: 'latency',
      latencyMs: options.ms,
      jitterMs: options.jitterMs ?? 0,
      direction: options.direction ?? 'both',
    };
    this.proxy(id, 'latency').addToxic(validateToxic(toxic));
  }

  async toxic(id: string, toxic: Toxic): Promise<void> {
    this.target(id);
    this.proxy(id, 'toxic').addToxic(validateToxic(toxic));
  }

  async clock(id: string, options: ClockOptions): Promise<void> {
    const node = this.target(id);
    const { offsetMs, rate = 1 } = options ?? ({} as ClockOptions);
    if (typeof offsetMs !== 'number' || !Number.isFinite(offsetMs)) {
      throw new InvalidArgumentError('clock.offsetMs', offsetMs, 'a finite number of milliseconds');
    }
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
      throw new InvalidArgumentError('clock.rate', rate, 'a positive finite number');
    }
    if (!this.cluster.recipe.clockShim) {
      throw new UnsupportedFaultError(
        'clock',
        `${this.cluster.recipe.server} node ${id}`,
        "etcd is a Go binary whose runtime reads the clock through the vDSO, bypassing libc, so an LD_PRELOAD shim can't skew it",
      );
    }
    await node.writeClock(offsetMs, rate);
    this.skewed.add(id);
    await sleep(SHIM_PICKUP_MS);
  }

  async heal(): Promise<void> {
    this.live();
    for (const id of this.cut) this.cluster.proxies.get(id)?.setCut(() => false);
    this.cut.clear();
    for (const proxy of this.cluster.proxies.values()) proxy.setToxics([]);
    await Promise.all([
      ...[...this.chained].map((id) => this.cluster.node(id).iptables([`-F ${CHAIN}`])),
      ...[...this.paused].map((id) => this.resume(id)),
      ...[...this.skewed].map((id) => this.cluster.node(id).writeClock(0, 1)),
    ]);
    this.skewed.clear();
    await Promise.all([...this.killed].map((id) => this.restart(id)));
    await sleep(SHIM_PICKUP_MS);
  }

  dispose(): void {
    this.disposed = true;
  }

  private async ensureChain(node: DockerNode): Promise<void> {
    if (this.chained.has(node.id)) return;
    await node.shell.check(
      `iptables -w -N ${CHAIN} 2>/dev/null; ` +
        `iptables -w -C INPUT -j ${CHAIN} 2>/dev/null || iptables -w -I INPUT -j ${CHAIN}; ` +
        `iptables -w -C OUTPUT -j ${CHAIN} 2>/dev/null || iptables -w -I OUTPUT -j ${CHAIN}`,
    );
    this.chained.add(node.id);
  }

  private proxy(id: string, fault: string) {
    const proxy = this.cluster.proxies.get(id);
    if (!proxy) throw new ProxyRequiredError(fault);
    return proxy;
  }

  private live(): void {
    if (this.disposed) throw new ClusterClosedError();
  }

  private target(id: string): DockerNode {
    this.live();
    if (typeof id !== 'string') throw new InvalidArgumentError('node id', id, "a node id such as 'n1'");
    return this.cluster.node(id);
  }
}
