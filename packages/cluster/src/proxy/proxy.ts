import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Toxic } from '../types.js';
import type { CallerFault } from './caller.js';
import { Link, type LinkEffects, NO_EFFECTS } from './link.js';
import { resetSocket } from './reset.js';
import { effectsOf, validateToxic } from './toxics.js';

export interface ProxyOptions {
  /** For messages: 'n1 client', 'n2 peer'. */
  readonly name: string;
  readonly upstreamHost: string;
  readonly upstreamPort: number;
  /**
   * Finds which node a connection comes from (peer proxies): until it answers the connection is held, then it is
   * held for as long as `isCut(source)` says the link is cut.
   */
  readonly identify?: (socket: Socket) => Promise<string | undefined>;
}

/** One client connection and its two directions. */
class ProxiedConnection {
  upstream: Socket | undefined;
  readonly up: Link;
  down: Link | undefined;
  source: string | undefined;
  identified: boolean;
  private timers: NodeJS.Timeout[] = [];
  private cut = false;
  /** Held by a fault on its calling process (see `FaultProxy.setCallerFault`), apart from the node's cut. */
  private callerCut = false;

  constructor(
    readonly client: Socket,
    private readonly proxy: FaultProxy,
  ) {
    this.identified = proxy.options.identify === undefined;
    this.up = new Link(client, () => proxy.effects.upstream, proxy.handshakeRewriter);
    client.on('error', () => undefined);
    client.on('close', () => this.maybeDone());
  }

  /** Connects upstream the first time the link is not cut: a cut link never even reaches the server. */
  private connectUpstream(): void {
    if (this.upstream || this.client.destroyed) return;
    const upstream = connect({
      host: this.proxy.options.upstreamHost,
      port: this.proxy.options.upstreamPort,
    });
    upstream.setNoDelay(true);
    this.upstream = upstream;
    this.down = new Link(upstream, () => this.proxy.effects.downstream);
    this.down.setStalled(this.cut || this.callerCut);
    this.down.attach(this.client);
    upstream.on('connect', () => this.up.attach(upstream));
    upstream.on('error', () => {
      // Refused or reset by the server: the client sees a reset too.
      resetSocket(this.client);
    });
    upstream.on('close', () => this.maybeDone());
  }

  setCut(cut: boolean): void {
    this.cut = cut;
    this.applyCut();
  }

  setCallerCut(cut: boolean): void {
    this.callerCut = cut;
    this.applyCut();
  }

  private applyCut(): void {
    const cut = this.cut || this.callerCut;
    this.up.setStalled(cut);
    this.down?.setStalled(cut);
    if (!cut && this.identified) this.connectUpstream();
  }

  /** Aborts both halves with an RST. */
  reset(): void {
    resetSocket(this.client);
    if (this.upstream) resetSocket(this.upstream);
  }

  /** Toxiproxy's reset_peer and timeout-with-close act on the whole connection after a delay. */
  schedule(ms: number, action: 'reset' | 'close'): void {
    this.timers.push(
      setTimeout(() => {
        if (action === 'reset') {
          resetSocket(this.client);
          if (this.upstream) resetSocket(this.upstream);
        } else {
          this.destroy();
        }
      }, ms),
    );
  }

  clearSchedules(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }

  destroy(): void {
    this.clearSchedules();
    this.up.dispose();
    this.down?.dispose();
    this.client.destroy();
    this.upstream?.destroy();
    this.proxy.forget(this);
  }

  private maybeDone(): void {
    if (this.client.destroyed && (this.upstream === undefined || this.upstream.destroyed)) this.destroy();
  }
}

/**
 * A TCP proxy in front of one server port, speaking Toxiproxy's vocabulary (latency + jitter, bandwidth, timeout /
 * black hole, reset_peer, slow_close, per direction) plus "cut": connections held without a byte passing, as
 * behind a packet-dropping firewall, until healed.
 */
export class FaultProxy {
  private readonly connections = new Set<ProxiedConnection>();
  private toxics: Toxic[] = [];
  effects: { upstream: LinkEffects; downstream: LinkEffects } = {
    upstream: NO_EFFECTS,
    downstream: NO_EFFECTS,
  };
  private isCut: (source: string | undefined) => boolean = () => false;
  private callerFault: CallerFault | undefined;
  /** Rewrites the first upstream chunk of each new connection (see LocalRecipe.peerHandshakeRewriter). */
  handshakeRewriter: ((chunk: Buffer) => Buffer) | undefined;
  private closed = false;

  private constructor(
    readonly options: ProxyOptions,
    private readonly server: Server,
    readonly port: number,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  static async listen(options: ProxyOptions, port = 0): Promise<FaultProxy> {
    const server = createServer({ allowHalfOpen: true, noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error(`${options.name} proxy has no port`);
    return new FaultProxy(options, server, address.port);
  }

  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Replaces the toxics; they act on open connections from the next chunk on. */
  setToxics(toxics: readonly Toxic[]): void {
    this.toxics = toxics.map(validateToxic);
    this.effects = {
      upstream: effectsOf(this.toxics, 'upstream'),
      downstream: effectsOf(this.toxics, 'downstream'),
    };
    for (const connection of this.connections) {
      connection.clearSchedules();
      this.scheduleToxics(connection);
    }
  }

  /** Adds a toxic, replacing one of the same type and direction (so `latency(…)` twice sets, not sums). */
  addToxic(toxic: Toxic): void {
    const same = (t: Toxic) =>
      t.type === toxic.type && (t.direction ?? 'both') === (toxic.direction ?? 'both');
    this.setToxics([...this.toxics.filter((t) => !same(t)), toxic]);
  }

  get activeToxics(): readonly Toxic[] {
    return this.toxics;
  }

  /** Sets which connections are cut (by their source node, when the proxy identifies sources). */
  setCut(isCut: (source: string | undefined) => boolean): void {
    this.isCut = isCut;
    for (const connection of this.connections) {
      if (connection.identified) connection.setCut(isCut(connection.source));
    }
  }

  /**
   * Cuts or resets the connections one process opened (`fault.owns`), the open ones and every new one, until
   * called with undefined. Resolves with how many open connections it hit.
   */
  async setCallerFault(fault: CallerFault | undefined): Promise<number> {
    this.callerFault = fault;
    const open = [...this.connections];
    if (!fault) {
      for (const connection of open) connection.setCallerCut(false);
      return 0;
    }
    const owned = await Promise.all(open.map((c) => fault.owns(c.client).catch(() => false)));
    let hit = 0;
    for (const [i, connection] of open.entries()) {
      if (!owned[i] || this.callerFault !== fault) continue;
      hit++;
      this.applyCallerFault(connection, fault);
    }
    return hit;
  }

  private applyCallerFault(connection: ProxiedConnection, fault: CallerFault): void {
    if (fault.reset) connection.reset();
    else connection.setCallerCut(true);
  }

  /** Drops every open connection (after a kill, the old connections are dead anyway). */
  dropConnections(): void {
    for (const connection of this.connections) connection.destroy();
  }

  forget(connection: ProxiedConnection): void {
    this.connections.delete(connection);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropConnections();
    await closing;
  }

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const connection = new ProxiedConnection(socket, this);
    this.connections.add(connection);
    this.scheduleToxics(connection);
    const fault = this.callerFault;
    if (fault) {
      // Held until it is known whether the faulted process opened it.
      connection.setCallerCut(true);
      fault
        .owns(socket)
        .catch(() => false)
        .then((owned) => {
          if (owned && this.callerFault === fault) this.applyCallerFault(connection, fault);
          else connection.setCallerCut(false);
        });
    }
    const identify = this.options.identify;
    if (!identify) {
      connection.setCut(this.isCut(undefined));
      return;
    }
    connection.setCut(true); // hold until we know who is calling
    identify(socket)
      .catch(() => undefined)
      .then((source) => {
        connection.source = source;
        connection.identified = true;
        connection.setCut(this.isCut(source));
      });
  }

  private scheduleToxics(connection: ProxiedConnection): void {
    for (const toxic of this.toxics) {
      if (toxic.type === 'reset_peer') connection.schedule(toxic.timeoutMs ?? 0, 'reset');
      if (toxic.type === 'timeout' && toxic.timeoutMs > 0) connection.schedule(toxic.timeoutMs, 'close');
    }
  }
}
