import { RedisLockClient, type RedisLockClientOptions } from '@fencekit/redis';
import { ioredisSendClock } from '../client/send-clock.js';
import { clusterBackend } from './cluster-backend.js';
import type { BackendFactory, BackendName, ConnectOptions } from './types.js';

/**
 * Replicated Redis as people deploy it (issue #17): a primary with two replicas behind three Sentinels, or Redis
 * Cluster (three primaries, a replica each). Replication is asynchronous, so `failover` and `split-brain` can lose
 * grants and roll the fence counter back; the `-epoch` variants fence with `fence: 'epoch'`, whose fences a
 * promoted replica hands out above every fence of the old primary.
 */
const REPLICATED_FAULTS = ['failover', 'split-brain', 'pause-client', 'kill', 'pause-server'] as const;

type HostPort = { host: string; port: number };

/** The data nodes, the Sentinels and the natMap, read back from the endpoint list (see cluster-deployment.ts). */
export function replicatedEndpoints(endpoints: readonly string[]): {
  nodes: HostPort[];
  sentinel?: { masterName: string; endpoints: string[] };
  natMap: Record<string, HostPort>;
} {
  const hostPort = (endpoint: string): HostPort => {
    const at = endpoint.lastIndexOf(':');
    return { host: endpoint.slice(0, at) || '127.0.0.1', port: Number(endpoint.slice(at + 1)) };
  };
  let sentinel: { masterName: string; endpoints: string[] } | undefined;
  let natMap: Record<string, HostPort> = {};
  const nodes: HostPort[] = [];
  for (const endpoint of endpoints) {
    if (endpoint.startsWith('sentinel=')) sentinel = JSON.parse(endpoint.slice('sentinel='.length));
    else if (endpoint.startsWith('natmap=')) natMap = JSON.parse(endpoint.slice('natmap='.length));
    else nodes.push(hostPort(endpoint));
  }
  return { nodes, ...(sentinel ? { sentinel } : {}), natMap };
}

/** The @fencekit/redis connection: through the Sentinels (following +switch-master), or Redis Cluster seeds. */
export function replicatedConnection(
  topology: 'redis-sentinel' | 'redis-cluster',
  endpoints: readonly string[],
): RedisLockClientOptions['connection'] {
  const { nodes, sentinel, natMap } = replicatedEndpoints(endpoints);
  if (topology === 'redis-cluster') return { cluster: nodes, options: { natMap } };
  if (!sentinel) throw new Error('redis-sentinel endpoints carry no Sentinels (sentinel=…)');
  return {
    name: sentinel.masterName,
    sentinels: sentinel.endpoints.map((e) => {
      const at = e.lastIndexOf(':');
      return { host: e.slice(0, at), port: Number(e.slice(at + 1)) };
    }),
    natMap,
    // Subscribe to the Sentinels' +switch-master: a client moves to the promoted replica when a majority
    // switches, as applications configured for failover do, instead of staying on the old primary until it drops.
    failoverDetector: true,
  };
}

/**
 * The `-wait` variants' `replicas`: WAIT for one replica after each grant, 500 ms at most (a sixth of the
 * default TTL), the setting the redis README's "Failover and WAIT" measures. Exported for the bounds.
 */
export const WAIT_REPLICAS = { count: 1, timeoutMs: 500 } as const;

function replicated(
  name: BackendName,
  topology: 'redis-sentinel' | 'redis-cluster',
  fence: 'counter' | 'epoch',
  replicas?: { count: number; timeoutMs: number },
): BackendFactory {
  const shape =
    topology === 'redis-sentinel'
      ? 'a primary, 2 replicas, 3 Sentinels'
      : 'Redis Cluster, 3 primaries + 1 replica each';
  return clusterBackend({
    name,
    description: `${shape} (@fencekit/redis${fence === 'epoch' ? ", fence: 'epoch'" : ''}${replicas ? `, replicas: { count: ${replicas.count} } (WAIT)` : ''})`,
    topology,
    nodes: topology === 'redis-sentinel' ? 3 : 6,
    safeFences: true,
    faults: REPLICATED_FAULTS,
    // Faults are held 1.5-3 TTLs: 4.5-9 s, so a promotion (2 s to see the primary down, an election) happens
    // within the fault and its probe sees it; a grant made on the old primary is still held after the switch.
    defaultTtlMs: 3000,
    nativeElection: false,
    async connect({ endpoints, namespace }: ConnectOptions) {
      // One hash tag per run: in Redis Cluster every key of a run lands in one slot (one shard).
      const locks = new RedisLockClient({
        connection: replicatedConnection(topology, endpoints),
        keyPrefix: `${namespace}:`,
        ...(fence === 'epoch' ? { fence: 'epoch' as const } : {}),
        ...(replicas ? { replicas } : {}),
      });
      // Redis Cluster: every resource moved onto slot 0, the shard `failover` and `split-brain` act on.
      const onShard = topology === 'redis-cluster' ? onSlotZero(locks) : locks;
      return { locks: onShard, sends: ioredisSendClock('@fencekit/redis'), close: () => locks.close() };
    },
  });
}

/** Redis Cluster's key slot of a hash tag: CRC16 (XMODEM) mod 16384. */
export function slotOf(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** `resource~n`, the first n whose slot is 0 (a resource's keys share the hash tag `{resource}`). */
export function slotZeroName(resource: string): string {
  for (let n = 0; n < 1_000_000; n++) {
    const name = `${resource}~${n}`;
    if (slotOf(name) === 0) return name;
  }
  throw new Error(`no name on slot 0 found for ${resource}`);
}

/**
 * The lock client with every resource renamed onto slot 0: @fencekit/cluster's promotion faults act on the
 * shard of slot 0 by default, so the run's lock is the one they fail over. Everything else is the client's own.
 */
function onSlotZero(locks: RedisLockClient): RedisLockClient {
  const names = new Map<string, string>();
  const rename = (resource: string) => {
    const known = names.get(resource);
    if (known !== undefined) return known;
    const name = slotZeroName(resource);
    names.set(resource, name);
    return name;
  };
  return new Proxy(locks, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === 'acquire' || property === 'tryAcquire') {
        return (resource: string, options: unknown) =>
          (value as (r: string, o: unknown) => unknown).call(target, rename(resource), options);
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export const redisSentinelBackend = replicated('redis-sentinel', 'redis-sentinel', 'counter');
export const redisClusterBackend = replicated('redis-cluster', 'redis-cluster', 'counter');
export const redisSentinelEpochBackend = replicated('redis-sentinel-epoch', 'redis-sentinel', 'epoch');
export const redisClusterEpochBackend = replicated('redis-cluster-epoch', 'redis-cluster', 'epoch');
export const redisSentinelWaitBackend = replicated(
  'redis-sentinel-wait',
  'redis-sentinel',
  'counter',
  WAIT_REPLICAS,
);
export const redisClusterWaitBackend = replicated(
  'redis-cluster-wait',
  'redis-cluster',
  'counter',
  WAIT_REPLICAS,
);
