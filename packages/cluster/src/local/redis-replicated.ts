import type { ProbeTarget } from '../leader.js';
import { redisPing, redisTimeMs } from '../probes.js';
import { redisInfo } from '../resp.js';
import type { LocalRecipe, NodeLayout } from './recipe.js';

/** The name the Sentinels monitor the primary under. */
export const SENTINEL_MASTER_NAME = 'fencekit';

/**
 * Sentinel timings sized for tests on a loaded machine: a primary is subjectively down after 2 s without an
 * answer, and a failover that stalls is abandoned (and may be retried by another Sentinel) after 4 s; a next failover of the same primary waits 8 s.
 */
export const SENTINEL_DOWN_AFTER_MS = 2000;
export const SENTINEL_FAILOVER_TIMEOUT_MS = 4000;
/** Redis Cluster: a node unreachable this long is flagged failing and its replica may be promoted. */
export const CLUSTER_NODE_TIMEOUT_MS = 2000;

/** The address a member announces to its peers: its peer proxy in front of its client port. */
export const announcedPort = (node: NodeLayout) => node.advertisedPeerPorts[0] ?? node.clientPort;

/** What every data node shares: no persistence (a restart comes back empty), quick replication timeouts. */
function dataNodeConfig(node: NodeLayout): string[] {
  return [
    `bind ${node.listenHost}`,
    `port ${node.clientPort}`,
    `dir ${node.dir}`,
    'save ""',
    'appendonly no',
    'protected-mode no',
    'daemonize no',
    'logfile ""',
    // Full syncs start at once instead of waiting 5 s for more replicas to join the same transfer.
    'repl-diskless-sync-delay 0',
    // A replica cut off from its primary sees the link down after 5 s (default 60 s); the primary pings each second.
    'repl-ping-replica-period 1',
    'repl-timeout 5',
  ];
}

/**
 * The partition probe's view of replicated Redis: every replica's link to its primary is up and every primary
 * counts its replicas connected (a cut link shows once `repl-timeout`, 5 s, runs out on either side).
 */
async function replicationLinks(
  targets: readonly ProbeTarget[],
): Promise<{ agreed: boolean; detail: string }> {
  const infos = await Promise.all(
    targets.map((t) => redisInfo(t.host, t.port, 'replication').catch(() => undefined)),
  );
  let replicas = 0;
  let linked = 0;
  let counted = 0;
  const detail = targets.map((t, i) => {
    const info = infos[i];
    if (!info) return `${t.id}: no answer`;
    if (info.get('role') === 'master') {
      counted += Number(info.get('connected_slaves') ?? 0);
      return `${t.id}: primary, ${info.get('connected_slaves')} replicas connected`;
    }
    replicas++;
    const up = info.get('master_link_status') === 'up';
    if (up) linked++;
    return `${t.id}: replica, link ${up ? 'up' : 'down'}`;
  });
  return {
    agreed: infos.every((i) => i !== undefined) && replicas === linked && counted === replicas,
    detail: detail.join(', '),
  };
}

/**
 * One primary (n1) and replicas, each Redis beside a Sentinel of its own (as on three hosts). Replicas reach the
 * primary, and Sentinels reach every Redis and each other, through the peer proxies: the data nodes announce their
 * proxy (`replica-announce-port`), the Sentinels theirs (`sentinel announce-port`), and the Sentinels monitor the
 * primary at its proxy, so a partition cuts replication and Sentinel links alike. Clients call the data nodes at
 * their own ports (or client proxies) and ask the Sentinels at theirs: a partition never cuts a client.
 */
export const redisSentinelRecipe: LocalRecipe = {
  server: 'redis',
  peerPortCount: 1,
  peersUseClientPort: true,
  replication: 'sentinel',
  clockShim: true,
  readyTimeoutMs: 15_000,
  launch(node, all) {
    const primary = all[0]!;
    const config = [
      ...dataNodeConfig(node),
      `replica-announce-ip ${node.advertisedHost}`,
      `replica-announce-port ${announcedPort(node)}`,
      ...(node.id === primary.id ? [] : [`replicaof ${primary.advertisedHost} ${announcedPort(primary)}`]),
    ];
    // A config file, not arguments: Sentinel rewrites the roles it changes into it (CONFIG REWRITE), so a
    // restarted node comes back with the role it had.
    return {
      command: 'redis-server',
      args: [`${node.dir}/redis.conf`],
      files: { 'redis.conf': `${config.join('\n')}\n` },
    };
  },
  companion(node, all) {
    const primary = all[0]!;
    const name = SENTINEL_MASTER_NAME;
    const config = [
      `bind ${node.listenHost}`,
      `port ${node.peerPorts[1]}`,
      'daemonize no',
      'protected-mode no',
      'logfile ""',
      `dir ${node.dir}`,
      `sentinel announce-ip ${node.advertisedHost}`,
      `sentinel announce-port ${node.advertisedPeerPorts[1]}`,
      `sentinel monitor ${name} ${primary.advertisedHost} ${announcedPort(primary)} ${Math.floor(all.length / 2) + 1}`,
      `sentinel down-after-milliseconds ${name} ${SENTINEL_DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${name} ${SENTINEL_FAILOVER_TIMEOUT_MS}`,
      `sentinel parallel-syncs ${name} 1`,
    ];
    return {
      name: 'sentinel',
      command: 'redis-server',
      args: [`${node.dir}/sentinel.conf`, '--sentinel'],
      files: { 'sentinel.conf': `${config.join('\n')}\n` },
    };
  },
  ready: (target, timeoutMs) => redisPing(target.host, target.port, timeoutMs),
  readClock: async (target) => ({ ms: await redisTimeMs(target.host, target.port), wall: true }),
  leaderAgreement: replicationLinks,
};

/**
 * Redis Cluster: every node cluster-enabled with its `nodes.conf` in its dir, announcing its peer proxies for
 * both its client port (what replicas replicate from and what MOVED/CLUSTER SLOTS name) and its bus port, so a
 * partition cuts gossip, failure reports, failover votes and replication. The first half of the nodes become
 * primaries with the slots split evenly, the second half their replicas (`RedisReplication` does the joining).
 */
export const redisClusterRecipe: LocalRecipe = {
  server: 'redis',
  peerPortCount: 1,
  peersUseClientPort: true,
  replication: 'cluster',
  clockShim: true,
  readyTimeoutMs: 15_000,
  launch(node) {
    const config = [
      ...dataNodeConfig(node),
      'cluster-enabled yes',
      `cluster-config-file ${node.dir}/nodes.conf`,
      `cluster-node-timeout ${CLUSTER_NODE_TIMEOUT_MS}`,
      `cluster-port ${node.peerPorts[1]}`,
      `cluster-announce-ip ${node.advertisedHost}`,
      `cluster-announce-port ${announcedPort(node)}`,
      `cluster-announce-bus-port ${node.advertisedPeerPorts[1]}`,
      // A replica may be promoted however long it was cut off: the split-brain fault wants a promotion.
      'cluster-replica-validity-factor 0',
      // Replicas stay with their shard (one each): a primary left without one would otherwise take another's.
      'cluster-allow-replica-migration no',
    ];
    return {
      command: 'redis-server',
      args: [`${node.dir}/redis.conf`],
      files: { 'redis.conf': `${config.join('\n')}\n` },
    };
  },
  ready: (target, timeoutMs) => redisPing(target.host, target.port, timeoutMs),
  readClock: async (target) => ({ ms: await redisTimeMs(target.host, target.port), wall: true }),
  leaderAgreement: replicationLinks,
};
