import { InvalidArgumentError, settleWithin } from '@fencekit/core';
import { Redis, type RedisOptions } from 'ioredis';
import { connectionTarget } from './connection-target.js';
import { reconnectAfterSentinelEnd, stopReconnecting } from './sentinel-reconnect.js';

/**
 * How a client reaches Redis: an ioredis instance the caller owns (never closed by fencekit), or
 * connection options / a redis:// URL (AUTH/ACL `username` + `password`, `tls`, `db`… are passed to
 * ioredis as they are) for a connection fencekit opens and closes itself.
 */
export type RedisConnection = Redis | RedisOptions | string | URL | (RedisOptions & { url: string | URL });

/** Defaults for connections fencekit opens: every command is bounded, so no call hangs forever. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

export interface OpenedConnection {
  readonly redis: Redis;
  /** True when fencekit opened it and so must close it. */
  readonly owned: boolean;
  /** "host:port" for messages. */
  readonly name: string;
}

/**
 * Whether `value` is an ioredis connection, told by its shape rather than `instanceof`: ioredis is a
 * peer dependency, and an application may hold an instance of another copy or minor version than the
 * one this module loaded (nested installs, bundles), which `instanceof Redis` would take for options
 * and connect to localhost:6379 instead. Options objects and URLs have none of these members.
 */
export function isRedisInstance(value: unknown): value is Redis {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<
    Record<'sendCommand' | 'duplicate' | 'quit' | 'on' | 'options' | 'status', unknown>
  >;
  return (
    typeof candidate.sendCommand === 'function' &&
    typeof candidate.duplicate === 'function' &&
    typeof candidate.quit === 'function' &&
    typeof candidate.on === 'function' &&
    typeof candidate.status === 'string' &&
    typeof candidate.options === 'object' &&
    candidate.options !== null &&
    // An ioredis Cluster has every member above too: it says it is one (see isClusterInstance).
    (value as { isCluster?: unknown }).isCluster !== true
  );
}

/** What a single-node connection may be, for the error that refuses anything else. */
export const SINGLE_NODE_ACCEPTED = 'an ioredis Redis instance, ioredis connection options or a redis:// URL';

/**
 * Refuses a client instance that is not an ioredis `Redis` (an ioredis `Cluster` where one node is
 * needed, a node-redis client, anything with `sendCommand` or `isCluster`) rather than let it be
 * taken for connection options: spread into `new Redis({...})` it has no host or port, and fencekit
 * would lock on localhost:6379 with nobody told. Options objects and URLs pass.
 */
export function assertSingleNodeConnection(
  connection: unknown,
  argument = 'connection',
  accepted = SINGLE_NODE_ACCEPTED,
): asserts connection is RedisConnection {
  if (typeof connection === 'string' || isRedisInstance(connection)) return;
  if (typeof connection !== 'object' || connection === null || Array.isArray(connection)) {
    throw new InvalidArgumentError(argument, connection, accepted);
  }
  const kind = clientKind(connection);
  if (kind !== undefined) throw new InvalidArgumentError(argument, kind, accepted);
  // Options that name no server, a URL object of another scheme…: refused here, before anything opens.
  connectionTarget(connection, argument, accepted);
}

/** What client `value` is, told by the members a client has and options never do; undefined for options. */
function clientKind(value: object): string | undefined {
  const candidate = value as { isCluster?: unknown; sendCommand?: unknown; constructor?: unknown };
  if (candidate.isCluster === true) return 'an ioredis Cluster';
  if (candidate.isCluster !== undefined || typeof candidate.sendCommand === 'function') {
    const name = typeof candidate.constructor === 'function' ? candidate.constructor.name : '';
    return `a client instance${name ? ` (${name})` : ''} that is not an ioredis Redis`;
  }
  return undefined;
}

export function openConnection(
  connection: RedisConnection,
  defaults: RedisOptions = {},
  argument = 'connection',
  accepted = SINGLE_NODE_ACCEPTED,
): OpenedConnection {
  if (isRedisInstance(connection)) {
    return { redis: connection, owned: false, name: describe(connection) };
  }
  assertSingleNodeConnection(connection, argument, accepted);
  const base: RedisOptions = {
    commandTimeout: DEFAULT_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 2,
    ...defaults,
  };
  const target = connectionTarget(connection, argument, accepted);
  const redis =
    target.url !== undefined
      ? new Redis(target.url, { ...base, ...target.options })
      : new Redis({ ...base, ...target.options });
  // Failures reach the caller through the commands that fail; the event would only add noise.
  redis.on('error', () => undefined);
  // Through Sentinel, a failover can end the connection for good: see sentinel-reconnect.ts.
  reconnectAfterSentinelEnd(redis);
  return { redis, owned: true, name: describe(redis) };
}

/**
 * A second connection like `redis` (same auth, TLS, db), for pub/sub. It queues commands while
 * connecting even when `redis` does not (Redlock's nodes fail fast instead), so SUBSCRIBE waits for
 * the connection rather than failing because it is not up yet.
 */
export function duplicateConnection(redis: Redis, overrides: RedisOptions = {}): Redis {
  const copy = redis.duplicate({ enableOfflineQueue: true, ...overrides });
  copy.on('error', () => undefined);
  reconnectAfterSentinelEnd(copy);
  return copy;
}

/**
 * `WAIT count timeoutMs`, bounded on the client too (a connection fencekit opens has no per-command
 * ioredis timer): a server that stopped answering fails it as a timeout.
 */
export async function waitForReplicas(redis: Redis, count: number, timeoutMs: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('Command timed out')), timeoutMs + DEFAULT_COMMAND_TIMEOUT_MS);
  });
  try {
    return Number(await Promise.race([redis.wait(count, timeoutMs), bound]));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How long `close()` waits for a server to answer QUIT. A live server answers at once, after the
 * commands queued before it on the connection (which have their own bounds); one that does not
 * (stopped, cut off with its socket open) gets its socket destroyed, so `close()` never waits on it.
 */
export const QUIT_TIMEOUT_MS = 1_000;

/**
 * QUIT, bounded: a server that does not answer within `timeoutMs` (or an error) gets its socket
 * destroyed. Resolves once the socket is closed, so nothing of the connection outlives it; a connection
 * found through Sentinel has its Sentinel subscriptions (ioredis' `failoverDetector`) closed the same way.
 */
export async function closeConnection(redis: Redis, timeoutMs = QUIT_TIMEOUT_MS): Promise<void> {
  // Before the QUIT: the 'end' it brings must not make the connection reconnect.
  stopReconnecting(redis);
  const watchers = new Set(sentinelWatchers(redis));
  await closeOwnSocket(redis, timeoutMs);
  // Read again: a failover seen during the QUIT replaced the detector (and its connections).
  for (const watcher of sentinelWatchers(redis)) watchers.add(watcher);
  await Promise.all([...watchers].map((watcher) => closeOwnSocket(watcher, 0)));
}

/**
 * The Sentinel connections of ioredis' `failoverDetector` (a `+switch-master` subscription on each
 * Sentinel) behind a connection found through Sentinel. ioredis closes them only in `disconnect()`,
 * never after an answered QUIT, and then only half (a 2 s timer destroys them): left alone they keep
 * the process alive after close(). Not in ioredis' declared types; set by every 5.x SentinelConnector.
 */
function sentinelWatchers(redis: Redis): Redis[] {
  const detector = (
    redis as unknown as {
      connector?: {
        failoverDetector?: { isDisconnected?: boolean; sentinels?: { client?: Redis }[] } | null;
      };
    }
  ).connector?.failoverDetector;
  if (detector === undefined || detector === null || !Array.isArray(detector.sentinels)) return [];
  // A `+switch-master` arriving while they close must not make the closed connection reconnect.
  detector.isDisconnected = true;
  return detector.sentinels.flatMap((sentinel) =>
    isRedisInstance(sentinel.client) ? [sentinel.client] : [],
  );
}

/** QUIT (bounded), then the socket destroyed: see `closeConnection`. */
async function closeOwnSocket(redis: Redis, timeoutMs: number): Promise<void> {
  let quit = false;
  await settleWithin(
    redis.quit().then(() => {
      quit = true;
    }),
    timeoutMs,
  );
  const socket = redis.stream;
  // ioredis' disconnect() only half-closes the socket and leaves a timer (its disconnectTimeout,
  // 2 s) to destroy it if the server never closes its side: destroyed here instead, so close()
  // does not resolve with a socket and that timer still open. After an answered QUIT the server is
  // closing its side anyway.
  if (!quit) redis.disconnect();
  if (socket === undefined) return;
  if (socket.closed) {
    // Closed before close() (the server died; ioredis is between reconnect attempts): QUIT or
    // disconnect() still armed ioredis' 2 s timer to destroy it, which only this socket's 'close'
    // event clears, and that event has come and gone. Repeated, so the timer does not outlive close().
    socket.emit('close', false);
    return;
  }
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.destroy();
  await closed;
}

function describe(redis: Redis): string {
  const { host, port, path, sentinels, name } = redis.options;
  if (sentinels !== undefined && sentinels !== null) return `Sentinel master "${name ?? 'mymaster'}"`;
  return path ? path : `${host ?? 'localhost'}:${port ?? 6379}`;
}
