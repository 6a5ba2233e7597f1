import { InvalidArgumentError } from '@fencekit/core';
import { ClusterClosedError, UnsupportedFaultError } from '../errors.js';
import type { ClockOptions, Faults, LatencyOptions, PartitionSpec, Toxic } from '../types.js';
import type { LocalCluster } from './cluster.js';

/** The nemesis for processes on loopback: signals for kill and pause, proxies for the network, a shim for clocks. */
export class LocalFaults implements Faults {
  private readonly killed = new Set<string>();
  private disposed = false;

  constructor(private readonly cluster: LocalCluster) {}

  async kill(id: string): Promise<void> {
    const node = this.target(id);
    await node.process.kill('SIGKILL');
    this.killed.add(id);
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

  async partition(spec: PartitionSpec): Promise<void> {
    this.live();
    void spec;
    throw new UnsupportedFaultError('partition', 'the local provider', 'not implemented yet');
  }

  async cutClients(id: string): Promise<void> {
    this.target(id);
    throw new UnsupportedFaultError('cutClients', 'the local provider', 'not implemented yet');
  }

  async latency(id: string, options: LatencyOptions): Promise<void> {
    this.target(id);
    void options;
    throw new UnsupportedFaultError('latency', 'the local provider', 'not implemented yet');
  }

  async toxic(id: string, toxic: Toxic): Promise<void> {
    this.target(id);
    void toxic;
    throw new UnsupportedFaultError('toxic', 'the local provider', 'not implemented yet');
  }

  async clock(id: string, options: ClockOptions): Promise<void> {
    this.target(id);
    void options;
    throw new UnsupportedFaultError('clock', 'the local provider', 'not implemented yet');
  }

  async heal(): Promise<void> {
    this.live();
    for (const node of this.cluster.localNodes) node.process.resume();
    await Promise.all([...this.killed].map((id) => this.restart(id)));
  }

  /** Called by close(): drops fault state without healing. */
  async dispose(): Promise<void> {
    this.disposed = true;
  }

  private live(): void {
    if (this.disposed) throw new ClusterClosedError();
  }

  private target(id: string) {
    this.live();
    if (typeof id !== 'string') throw new InvalidArgumentError('node id', id, "a node id such as 'n1'");
    return this.cluster.node(id);
  }
}
