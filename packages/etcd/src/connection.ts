import type { Socket } from 'node:net';
import { InvalidArgumentError } from '@fencekit/core';
import { ExponentialBackoff, noop } from 'cockatiel';
import { Etcd3, type IOptions } from 'etcd3';

/** How to reach etcd. Everything security-related is handed to the `etcd3` client unchanged. */
export interface EtcdConnectionOptions {
  /** Client endpoints: `127.0.0.1:2379` or full URLs (`https://…`). Ignored when `client` is given. */
  hosts?: string | readonly string[];
  /** TLS: CA certificate, and for mutual TLS the client key and certificate chain (PEM buffers). */
  credentials?: { rootCertificate: Buffer; privateKey?: Buffer; certChain?: Buffer };
  /**
   * etcd user/password authentication. Needs TLS (`credentials`, or `https://` hosts), since the
   * password and the token etcd answers with travel in every request; without TLS it is refused
   * (`InvalidArgumentError`) unless `allowInsecureAuth` is true.
   */
  auth?: { username: string; password: string };
  /** Send `auth` over plaintext connections all the same (a trusted loopback or test network). Default false. */
  allowInsecureAuth?: boolean;
  /** Deadline for each unary request (ms). Default 5 000: no request waits forever on a dead server. */
  callTimeoutMs?: number;
  /** How long to wait while connecting (ms). Default 5 000. */
  dialTimeoutMs?: number;
  /** Bring your own client; fencekit then never closes it. */
  client?: Etcd3;
}

type WatchBackoff = NonNullable<NonNullable<IOptions['faultHandling']>['watchBackoff']>;

export const DEFAULT_CALL_TIMEOUT_MS = 5_000;

/**
 * Call options for one of fencekit's own requests, bounding the whole call by `timeoutMs`. `etcd3`
 * retries a failed try up to three more times, on the next member, and a deadline from
 * `defaultCallOptions` restarted with every try: a request to a stopped member took 4 ×
 * `callTimeoutMs`. Here the end is fixed once, before the call; `etcd3` reads `deadline` once per try
 * (it spreads these options into each try's own), and each try gets at most a quarter of the budget,
 * so a try stuck on a member that is stopped, or gone without a reset (a killed container), leaves
 * the next tries, on the other members, time to answer. A quarter, not a half: after a member dies,
 * a revoke or withdrawal that frees the queue should not wait half the budget first.
 */
export function callOptions(timeoutMs: number): { readonly deadline: number } {
  const end = Date.now() + timeoutMs;
  const slice = timeoutMs / 4;
  return {
    get deadline() {
      return Math.min(end, Date.now() + slice);
    },
  };
}

/** An `etcd3` client plus whether fencekit owns it (and so must close it). */
export interface Connection {
  readonly etcd: Etcd3;
  readonly owned: boolean;
  readonly callTimeoutMs: number;
  /** Sockets of an owned client's connections, ended by `closeNow` (unused for a caller's client). */
  readonly sockets: SocketTracker;
}

export function connect(options: EtcdConnectionOptions): Connection {
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  if (!Number.isFinite(callTimeoutMs) || callTimeoutMs <= 0) {
    throw new InvalidArgumentError(
      'callTimeoutMs',
      callTimeoutMs,
      'a positive finite number of milliseconds',
    );
  }
  if (options.client)
    return { etcd: options.client, owned: false, callTimeoutMs, sockets: new SocketTracker() };
  const hosts = typeof options.hosts === 'string' ? [options.hosts] : [...(options.hosts ?? [])];
  if (hosts.length === 0 || hosts.some((h) => typeof h !== 'string' || h.length === 0)) {
    throw new InvalidArgumentError(
      'hosts',
      options.hosts,
      'one or more etcd endpoints such as "127.0.0.1:2379"',
    );
  }
  // `etcd3` would take `user:password@` into its target and from there into error messages; etcd
  // takes credentials only as `auth`. An endpoint never holds an `@` or whitespace otherwise, so
  // either anywhere is refused: a check anchored at the start was passed by a leading space.
  // (The error itself shows the hosts redacted; its wording has no `@`, which the redactor would take
  // for user-info.)
  if (hosts.some((h) => /[@\s]/.test(h))) {
    throw new InvalidArgumentError(
      'hosts',
      options.hosts,
      'endpoints such as "127.0.0.1:2379" or "https://etcd-1:2379", without spaces or user info (give etcd credentials as auth)',
    );
  }
  const scheme = options.credentials ? 'https://' : 'http://';
  const urls = hosts.map((h) => (/^https?:\/\//.test(h) ? h : scheme + h));
  // etcd3 throws a plain Error for a mix; refused here as the bad argument it is.
  const secure = urls.filter((url) => url.startsWith('https:')).length;
  if (secure > 0 && secure < urls.length) {
    throw new InvalidArgumentError(
      'hosts',
      options.hosts,
      'endpoints all https:// or all plaintext, not a mix',
    );
  }
  assertAuthOverTls(options, urls);
  const config: IOptions = {
    hosts: urls,
    dialTimeout: options.dialTimeoutMs ?? 5_000,
    // gRPC waits 1 s, then up to 2 min (×1.6 each) before reconnecting a channel that failed: after
    // an outage of a few seconds a member could stay unused for seconds more while clients' sessions
    // and the queue's clean-up wait for it. Reconnect within 1 s of its return instead.
    grpcOptions: { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1_000 },
    // Streams (watch, keep-alive) live on; every unary call gets a deadline so none hangs forever.
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
    faultHandling: {
      // etcd3's default circuit breaker shuts a host out for 5 s after 3 failures: longer than a
      // short session TTL, so one blip would cost every lease. Sessions retry on their own clock.
      host: () => noop,
      // Watches (waiters, observers) come back within a second or two, not etcd3's default 30 s.
      // (etcd3 uses this as a backoff factory; its typings say IBackoff.)
      watchBackoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 1_000 }) as unknown as WatchBackoff,
    },
  };
  if (options.credentials) config.credentials = options.credentials;
  if (options.auth) config.auth = { username: options.auth.username, password: options.auth.password };
  const etcd = new Etcd3(config);
  return { etcd, owned: true, callTimeoutMs, sockets: trackSockets(etcd) };
}

/**
 * `auth` only over TLS (`etcd3` uses TLS for every host when `credentials` are given or any host is
 * `https://`), unless the caller opted in with `allowInsecureAuth`: otherwise the password, and the
 * token etcd answers with, would cross the network in plaintext.
 */
function assertAuthOverTls(options: EtcdConnectionOptions, urls: readonly string[]): void {
  const allow = options.allowInsecureAuth ?? false;
  if (typeof allow !== 'boolean') {
    throw new InvalidArgumentError('allowInsecureAuth', allow, 'a boolean');
  }
  const { auth } = options;
  if (auth === undefined) return;
  if (
    typeof auth !== 'object' ||
    auth === null ||
    typeof auth.username !== 'string' ||
    typeof auth.password !== 'string'
  ) {
    throw new InvalidArgumentError('auth', auth, 'an object with a username and a password (strings)');
  }
  // TLS exactly when etcd3 will use it: `credentials` truthy (etcd3 tests `if (credentials)`, so
  // null, false or '' mean plaintext), or every host `https:` (etcd3 refuses a mix, below).
  const tls = Boolean(options.credentials) || urls.every((url) => url.startsWith('https:'));
  if (!tls && !allow) {
    throw new InvalidArgumentError(
      'auth',
      auth,
      'TLS to send the password over (credentials, or https:// hosts), or allowInsecureAuth: true',
    );
  }
}

/** The parts of `etcd3`'s connection pool that `closeNow` and `trackSockets` reach into (all checked). */
interface PoolHost {
  cachedServices?: Record<string, GrpcService | undefined>;
  channelCredentials?: ChannelCredentials;
  resetAllServices?: () => void;
}
interface GrpcService {
  close(): void;
  getChannel?(): { getConnectivityState(tryToConnect: boolean): number };
}

/** grpc-js's `connectivityState.SHUTDOWN`: the channel is closed for good. */
const SHUTDOWN = 4;

function isShutDown(service: GrpcService): boolean {
  try {
    return service.getChannel?.().getConnectivityState(false) === SHUTDOWN;
  } catch {
    return true;
  }
}
/** grpc-js's ChannelCredentials, internal side: each new connection's socket passes through `connect`. */
interface ChannelCredentials {
  _equals(other: unknown): boolean;
  _createSecureConnector(...args: unknown[]): SecureConnector;
}
interface SecureConnector {
  connect(socket: Socket): Promise<unknown>;
  waitForReady(): Promise<void>;
  getCallCredentials(): unknown;
  destroy(): void;
}

function poolHosts(etcd: Etcd3): PoolHost[] {
  const hosts = (etcd as unknown as { pool?: { hosts?: unknown } }).pool?.hosts;
  return Array.isArray(hosts) ? (hosts as PoolHost[]) : [];
}

/** The sockets of one client's connections; once closed, it ends every socket it is handed. */
export class SocketTracker {
  readonly #open = new Set<Socket>();
  /**
   * gRPC clients `etcd3` dropped mid-run (`resetAllServices` after a failed call) but left open while
   * their channel is CONNECTING (up to a second, on timers): `close()` closes them for good.
   */
  readonly dropped = new Set<GrpcService>();
  #closed = false;

  /** false (and the socket destroyed) once closed. */
  add(socket: Socket): boolean {
    if (this.#closed) {
      socket.destroy();
      return false;
    }
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
    return true;
  }

  /**
   * Destroys every socket, now and from now on: grpc-js reconnects a subchannel whose handshake was
   * cut until it notices its channels are gone, and a late connection must not outlive close().
   */
  close(): Promise<void> {
    this.#closed = true;
    for (const service of this.dropped) service.close();
    this.dropped.clear();
    const closing = [...this.#open].map((socket) => socketClosed(socket));
    for (const socket of this.#open) socket.destroy();
    this.#open.clear();
    return boundedAll(closing, SOCKET_CLOSE_GRACE_MS);
  }
}

/**
 * Records every socket the client's gRPC connections open, so `closeNow` can end them all. Each
 * socket passes through the channel credentials' connector once connected, so the credentials are
 * wrapped; the wrapper equals only itself, so grpc-js, which shares a connection between channels of
 * equal target, options and credentials across the whole process, never shares one of this client's
 * connections with another client (that one closing would cut this one's calls).
 */
function trackSockets(etcd: Etcd3): SocketTracker {
  const sockets = new SocketTracker();
  const wrapped = new Map<ChannelCredentials, ChannelCredentials>();
  for (const host of poolHosts(etcd)) {
    const original = host.channelCredentials;
    if (typeof original?._createSecureConnector !== 'function' || typeof original._equals !== 'function')
      continue;
    let tracking = wrapped.get(original);
    if (!tracking) {
      const wrapper: ChannelCredentials = Object.create(original);
      wrapper._equals = (other) => other === wrapper;
      wrapper._createSecureConnector = (...args) => {
        const inner = original._createSecureConnector(...args);
        return {
          connect(socket) {
            if (!sockets.add(socket)) return Promise.reject(new Error('etcd client closed'));
            return inner.connect(socket);
          },
          waitForReady: () => inner.waitForReady(),
          getCallCredentials: () => inner.getCallCredentials(),
          destroy: () => inner.destroy(),
        };
      };
      tracking = wrapper;
      wrapped.set(original, tracking);
    }
    host.channelCredentials = tracking;
    const reset = host.resetAllServices;
    if (typeof reset === 'function') {
      host.resetAllServices = function (this: PoolHost) {
        // Those etcd3 has closed since are forgotten, so the set holds only ones still open.
        for (const service of sockets.dropped) if (isShutDown(service)) sockets.dropped.delete(service);
        for (const service of Object.values(this.cachedServices ?? {})) {
          if (service) sockets.dropped.add(service);
        }
        reset.call(this);
      };
    }
  }
  return sockets;
}

/**
 * Closes an owned `etcd3` client for good, now, leaving no socket or timer that keeps the process
 * alive, even with a member that accepted TCP but answers nothing (SIGSTOPped). Such a connection
 * stays CONNECTING, and two things kept a closed client's process alive until the member resumed:
 * - `etcd3`'s `close()` (connection-pool.js, `Host.resetAllServices`) does not close a gRPC client
 *   whose channel is CONNECTING: it waits up to a second for it to become ready first (timers);
 * - grpc-js never aborts a connection's pending HTTP/2 handshake (transport.js `createSession`
 *   waits for the server's SETTINGS with no deadline), neither when its channel closes nor when
 *   `etcd3` drops a failed member's channels mid-run, so that socket lived on.
 * So every gRPC client is closed here whatever its state, then every socket the client opened is
 * destroyed (its last requests, the revokes, were answered or timed out before this).
 */
export function closeNow(connection: Connection): Promise<void> {
  for (const host of poolHosts(connection.etcd)) {
    const cached = host.cachedServices;
    if (typeof cached !== 'object' || cached === null) continue;
    host.cachedServices = Object.create(null);
    for (const service of Object.values(cached)) {
      if (typeof service?.close === 'function') service.close();
    }
  }
  connection.etcd.close();
  return connection.sockets.close();
}

/**
 * How long close() waits for destroyed sockets to report closed: a destroyed socket's handle closes
 * on the event loop's next close phase, so close() resolving before then left it in the process's
 * active handles. A bound, not an expectation: it is one loop turn.
 */
const SOCKET_CLOSE_GRACE_MS = 1_000;

function socketClosed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

async function boundedAll(waits: Promise<void>[], ms: number): Promise<void> {
  if (waits.length === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([Promise.all(waits), bound]);
  } finally {
    clearTimeout(timer);
  }
}
