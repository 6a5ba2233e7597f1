import { ProxyRequiredError } from '../errors.js';
import { callerFault } from '../proxy/caller.js';
import { FaultProxy } from '../proxy/proxy.js';
import type { Toxic } from '../types.js';

/**
 * The host-side TCP proxies in front of each node's client port (only when the cluster was started with
 * `proxy: true`). Both providers put the same proxy on the clients' path, so client cuts and toxics live here once.
 */
export class ClientProxies {
  private readonly cut = new Set<string>();

  constructor(private readonly proxies: ReadonlyMap<string, FaultProxy> = new Map()) {}

  /**
   * A proxy on loopback for node `id` in front of a client port: a process's on loopback, or a container's port as
   * its engine publishes it (on the engine's host).
   */
  static listen(id: string, upstreamPort: number, upstreamHost = '127.0.0.1'): Promise<FaultProxy> {
    return FaultProxy.listen({ name: `${id} client`, upstreamHost, upstreamPort });
  }

  get(id: string): FaultProxy | undefined {
    return this.proxies.get(id);
  }

  /** Holds client ↔ server bytes of node `id` until `heal()`. */
  cutClients(id: string): void {
    const proxy = this.require(id, 'cutClients');
    this.cut.add(id);
    proxy.setCut(() => true);
  }

  /**
   * Holds (or, with `reset`, resets) every connection process `pid` has open to any node, and every new one,
   * until `heal()`; resolves with how many open connections it hit.
   */
  async cutProcess(pid: number, reset: boolean): Promise<number> {
    if (this.proxies.size === 0) throw new ProxyRequiredError('cutProcess');
    const fault = callerFault(pid, reset);
    const hits = await Promise.all([...this.proxies.values()].map((p) => p.setCallerFault(fault)));
    return hits.reduce((a, b) => a + b, 0);
  }

  /** `fault` names the nemesis call in the error when the cluster has no proxy. */
  addToxic(id: string, toxic: Toxic, fault = 'toxic'): void {
    this.require(id, fault).addToxic(toxic);
  }

  /** A killed server's connections are dead anyway: the proxy drops its halves so clients learn it at once. */
  dropConnections(id: string): void {
    this.proxies.get(id)?.dropConnections();
  }

  heal(): void {
    for (const id of this.cut) this.proxies.get(id)?.setCut(() => false);
    this.cut.clear();
    for (const proxy of this.proxies.values()) {
      proxy.setToxics([]);
      void proxy.setCallerFault(undefined);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
  }

  private require(id: string, fault: string): FaultProxy {
    const proxy = this.proxies.get(id);
    if (!proxy) throw new ProxyRequiredError(fault);
    return proxy;
  }
}
