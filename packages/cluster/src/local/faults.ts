import { InvalidArgumentError } from '@fencekit/core';
import { ClusterClosedError, UnsupportedFaultError } from '../errors.js';
import { clockShimError, writeClockSkew } from '../native.js';
import { validateToxic } from '../proxy/toxics.js';
import type { ClockOptions, Faults, LatencyOptions, PartitionSpec, Toxic } from '../types.js';
import { sleep } from '../wait.js';
import type { LocalCluster, LocalNode } from './cluster.js';

/** The shim re-reads its file every 2 ms; waiting a little longer means the skew is in force on return. */
const SHIM_PICKUP_MS = 20;

/** The nemesis for processes on loopback: signals for kill and pause, proxies for the network, a shim for clocks. */
export class LocalFaults implements Faults {
  private readonly killed = new Set<string>();
  private readonly skewed = new Set<string>();
  private disposed = false;

  constructor(private readonly cluster: LocalCluster) {}

  async kill(id: string): Promise<void> {
    const node = this.target(id);
    await node.process.kill('SIGKILL');
    this.killed.add(id);
    this.cluster.network.dropClientConnections(id);
  }

  async restart(id: string): Promise<void> {
    const node = this.target(id);
    if (node.process.running) await node.process.kill('SIGKILL');
    node.process.start();
    this.killed.delete(id);
    await this.cluster.waitReady(node);
  }

  async pause(id: string): Promise<void> {
    this.target(id).process.pause();
  }

  async resume(id: string): Promise<void> {
    this.target(id).process.resume();
  }

  /**
   * Cuts peer links through the peer proxies. On topologies whose servers never talk to each other (Redis) there
   * is nothing to cut, and the call validates its argument and does nothing.
   */
  async partition(spec: PartitionSpec): Promise<void> {
    this.live();
    this.cluster.network.partition(spec);
  }

  async cutClients(id: string): Promise<void> {
    this.target(id);
    this.cluster.network.cutClients(id);
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
    this.cluster.network.addToxic(id, validateToxic(toxic), 'latency');
  }

  async toxic(id: string, toxic: Toxic): Promise<void> {
    this.target(id);
    this.cluster.network.addToxic(id, validateToxic(toxic));
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
    this.skew(node, offsetMs, rate);
    await sleep(SHIM_PICKUP_MS);
  }

  async heal(): Promise<void> {
    this.live();
    this.cluster.network.heal();
    for (const node of this.cluster.localNodes) node.process.resume();
    for (const id of this.skewed) {
      const node = this.cluster.node(id);
      if (node.clockFile) writeClockSkew(node.clockFile, 0, 1);
    }
    this.skewed.clear();
    await Promise.all([...this.killed].map((id) => this.restart(id)));
    await sleep(SHIM_PICKUP_MS);
  }

  /** Called by close(): drops fault state without healing. */
  async dispose(): Promise<void> {
    this.disposed = true;
  }

  private skew(node: LocalNode, offsetMs: number, rate: number): void {
    if (this.cluster.recipe.server === 'etcd') {
      throw new UnsupportedFaultError(
        'clock',
        `etcd node ${node.id}`,
        "etcd is a Go binary whose runtime reads the clock through the vDSO, bypassing libc, so an LD_PRELOAD shim can't skew it",
      );
    }
    if (!node.clockFile) {
      throw new UnsupportedFaultError(
        'clock',
        `node ${node.id}`,
        clockShimError() ?? 'the clock shim is not loaded',
      );
    }
    writeClockSkew(node.clockFile, offsetMs, rate);
    this.skewed.add(node.id);
  }

  private live(): void {
    if (this.disposed) throw new ClusterClosedError();
  }

  private target(id: string): LocalNode {
    this.live();
    if (typeof id !== 'string') throw new InvalidArgumentError('node id', id, "a node id such as 'n1'");
    return this.cluster.node(id);
  }
}
