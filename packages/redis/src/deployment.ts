import { settleWithin } from '@fencekit/core';
import {
  Cluster,
  type ClusterNode,
  type ClusterOptions,
  Command,
  type Redis,
  type RedisOptions,
} from 'ioredis';
import {
  closeConnection,
  DEFAULT_COMMAND_TIMEOUT_MS,
  isRedisInstance,
  openConnection,
  QUIT_TIMEOUT_MS,
  type RedisConnection,
} from './connection.js';
import { clusterStartupNode } from './connection-target.js';
import { reconnectAfterSentinelEnd } from './sentinel-reconnect.js';
import { sweepShardedSubscribers, watchShardedSubscribers } from './sharded-subscribers.js';

/** A connection the lock commands go through: one node (direct or found through Sentinel) or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** Redis Cluster reached through startup nodes: fencekit opens the `Cluster` and closes it. */
export interface RedisClusterConnection {
  /** Startup nodes ('host:port', a port, or `{ host, port }`), as ioredis' `new Cluster(nodes)` takes them. */
  readonly cluster: readonly ClusterNode[];
  /** ioredis `ClusterOptions` (`natMap`, `redisOptions` with AUTH and TLS, …), passed as they are. */
  readonly options?: ClusterOptions;
}

/**
 * How `RedisLockClient` reaches Redis: everything `RedisConnection` takes (one node; ioredis options
 * with `sentinels` + `name` find the primary through Sentinel), an ioredis `Cluster` of the caller's
 * (never closed by fencekit), or startup nodes of a Redis Cluster.
 */
export type RedisDeployment = RedisConnection | Cluster | RedisClusterConnection;

/**
 * Whether `value` is an ioredis `Cluster`, told by shape as `isRedisInstance` does (a Cluster from
 * another copy of ioredis fails `instanceof`): ioredis sets `isCluster` on both classes, true on Cluster.
 */
export function isClusterInstance(value: unknown): value is Cluster {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<
    Record<'sendCommand' | 'duplicate' | 'quit' | 'on' | 'nodes' | 'status' | 'isCluster', unknown>
  >;
  return (
    candidate.isCluster === true &&
    typeof candidate.sendCommand === 'function' &&
    typeof candidate.duplicate === 'function' &&
    typeof candidate.quit === 'function' &&
    typeof candidate.on === 'function' &&
    typeof candidate.nodes === 'function' &&
    typeof candidate.status === 'string'
  );
}

function isClusterConnection(value: unknown): value is RedisClusterConnection {
  return (
    typeof value === 'object' &&
    value !== null &&
    !isRedisInstance(value) &&
    Array.isArray((value as { cluster?: unknown }).cluster)
  );
}

function isSentinelOptions(value: unknown): value is RedisOptions {
  return (
    typeof value === 'object' &&
    value !== null &&
    !isRedisInstance(value) &&
    Array.isArray((value as RedisOptions).sentinels) &&
    (value as RedisOptions).reconnectOnError === undefined
  );
}

export interface OpenedClient {
  readonly redis: RedisClient;
  /** True when fencekit opened it and so must close it. */
  readonly owned: boolean;
  /** For messages: "host:port", `Sentinel master "name"` or `Redis Cluster (host:port, …)`. */
  readonly name: string;
  readonly cluster: boolean;
}

/** What `RedisLockClient` accepts as its connection, for the error that refuses anything else. */
const DEPLOYMENT_ACCEPTED =
  'an ioredis Redis or Cluster instance, ioredis connection options (with sentinels for Sentinel), { cluster: startup nodes } or a redis:// URL';

/**
 * Opens (or adopts) the connection `deployment` names; `defaults` apply to connections fencekit
 * opens. A client instance it cannot use (not an ioredis Redis or Cluster) is refused, never taken
 * for options of a connection to localhost:6379.
 */
export function openClient(deployment: RedisDeployment, defaults: RedisOptions = {}): OpenedClient {
  if (isClusterInstance(deployment)) {
    return { redis: deployment, owned: false, name: describeCluster(deployment), cluster: true };
  }
  if (isClusterConnection(deployment)) {
    const options = deployment.options ?? {};
    const startupNodes = [...deployment.cluster].map(clusterStartupNode) as ClusterNode[];
    const cluster = new Cluster(startupNodes, {
      ...options,
      // disconnectTimeout: ioredis' disconnect() of a node it drops (and of each slot refresh's connection)
      // would keep a timer for 2 s, also on a socket already closed, which no close() of ours can reach.
      redisOptions: { maxRetriesPerRequest: 2, disconnectTimeout: 0, ...defaults, ...options.redisOptions },
    });
    // Failures reach the caller through the commands that fail; the event would only add noise.
    cluster.on('error', () => undefined);
    return { redis: cluster, owned: true, name: describeCluster(cluster), cluster: true };
  }
  if (isSentinelOptions(deployment)) {
    // A primary demoted by a failover answers READONLY (nothing was written) until Sentinel kills
    // its clients' connections: reconnecting at once asks the Sentinels for the new primary.
    defaults = { reconnectOnError: (error) => error.message.startsWith('READONLY'), ...defaults };
  }
  return {
    ...openConnection(deployment as RedisConnection, defaults, 'connection', DEPLOYMENT_ACCEPTED),
    cluster: false,
  };
}

/** Whether the connection bounds each command itself (ioredis' `commandTimeout`, per node in a Cluster). */
export function hasCommandTimeout(redis: RedisClient): boolean {
  if (isClusterInstance(redis)) return redis.options.redisOptions?.commandTimeout !== undefined;
  return redis.options.commandTimeout !== undefined;
}

/**
 * The pub/sub connection of a client's waiters. In a Cluster, a Cluster of its own whose sharded
 * subscribers (one per primary, following slot moves and failovers) carry SSUBSCRIBE to the node
 * that owns each channel's slot; elsewhere a duplicate of the connection (see `duplicateConnection`).
 * `fromSlotMap`: a Cluster's copy starts from the nodes `redis` knows now (see `knownNodes`) rather than
 * from its startup nodes.
 */
export function duplicateClient(
  redis: RedisClient,
  overrides: RedisOptions = {},
  fromSlotMap = false,
): RedisClient {
  if (!isClusterInstance(redis)) {
    const copy = redis.duplicate({ enableOfflineQueue: true, ...overrides });
    copy.on('error', () => undefined);
    // The wake-up subscriber ends like the command connection in a failover: see sentinel-reconnect.ts.
    reconnectAfterSentinelEnd(copy);
    return copy;
  }
  const copy = redis.duplicate(fromSlotMap ? knownNodes(redis) : [], {
    shardedSubscribers: true,
    enableOfflineQueue: true,
    redisOptions: { ...redis.options.redisOptions, ...overrides },
  });
  copy.on('error', () => undefined);
  watchShardedSubscribers(copy);
  return copy;
}

/**
 * The nodes a Cluster knows now (from its slot map, as it reaches them: after `natMap`), then its startup
 * nodes: seeds for a copy when the startup nodes alone may all be gone (a primary killed by a failover was the
 * only one). Startup nodes are not mapped by ioredis, so the mapped addresses are given as they are.
 */
export function knownNodes(cluster: Cluster): ClusterNode[] {
  const seeds = new Map<string, ClusterNode>();
  for (const node of cluster.nodes('all')) {
    const { host, port } = node.options;
    if (host !== undefined && port !== undefined) seeds.set(`${host}:${port}`, { host, port });
  }
  // Not in ioredis' declared types, but set by every 5.x Cluster.
  const startupNodes = (cluster as unknown as { startupNodes?: ClusterNode[] }).startupNodes ?? [];
  return [...seeds.values(), ...startupNodes];
}

/**
 * `WAIT count timeoutMs` after a write to `key`, on the connection that wrote it: in a Cluster, the
 * node that owns the key's slot (WAIT counts the replicas of the connection's own writes).
 */
export function waitCommand(
  redis: RedisClient,
  key: string,
  count: number,
  timeoutMs: number,
): Promise<unknown> {
  if (!isClusterInstance(redis)) return redis.wait(count, timeoutMs);
  const CommandOfConnection = (redis.constructor as { Command?: typeof Command }).Command ?? Command;
  const slot = new CommandOfConnection('exists', [key]).getSlot();
  const command = new CommandOfConnection('wait', [count, timeoutMs], { replyEncoding: 'utf8' });
  // The third argument routes a keyless command to the slot's primary (as ioredis' pipelines do).
  return redis.sendCommand(command, undefined, { slot }) as Promise<unknown>;
}

/**
 * `WAIT`, bounded on the client too (a connection fencekit opens has no per-command ioredis timer):
 * a server that stopped answering fails it as a timeout.
 */
export async function waitForReplicasOf(
  redis: RedisClient,
  key: string,
  count: number,
  timeoutMs: number,
): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('Command timed out')), timeoutMs + DEFAULT_COMMAND_TIMEOUT_MS);
  });
  try {
    return Number(await Promise.race([waitCommand(redis, key, count, timeoutMs), bound]));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Closes a connection fencekit opened: one node as `closeConnection` does; a Cluster by a bounded
 * QUIT to every node, then each node's socket destroyed, so nothing of it outlives the call (nor of its
 * sharded subscribers: see sharded-subscribers.ts). A slot refresh still in flight is waited for within
 * what is left of the QUIT's bound.
 */
export async function closeClient(redis: RedisClient, timeoutMs = QUIT_TIMEOUT_MS): Promise<void> {
  if (!isClusterInstance(redis)) return closeConnection(redis, timeoutMs);
  const until = performance.now() + timeoutMs;
  const nodes = new Set(redis.nodes('all'));
  const subscribers = sweepShardedSubscribers(redis);
  await settleWithin(redis.quit(), timeoutMs);
  // A failover may have changed the nodes while QUIT was on its way.
  for (const node of redis.nodes('all')) nodes.add(node);
  redis.disconnect();
  // ioredis' disconnect() half-closes each node's socket and destroys it 2 s later: done here.
  await Promise.all([...nodes].map((node) => closeConnection(node, 0)));
  await subscribers.finish(Math.max(0, until - performance.now()));
}

function describeCluster(cluster: Cluster): string {
  // Not in ioredis' declared types, but set by every 5.x Cluster.
  const startupNodes = (cluster as unknown as { startupNodes?: unknown[] }).startupNodes ?? [];
  const seeds = startupNodes
    .slice(0, 3)
    .map((node) =>
      typeof node === 'object' && node !== null
        ? `${(node as { host?: string }).host ?? '127.0.0.1'}:${(node as { port?: number }).port ?? 6379}`
        : String(node),
    );
  return `Redis Cluster (${seeds.join(', ')}${startupNodes.length > 3 ? ', …' : ''})`;
}
