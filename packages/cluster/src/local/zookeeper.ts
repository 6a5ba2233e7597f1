import { join } from 'node:path';
import { zookeeperLeader, zookeeperLeaderAgreement } from '../leader.js';
import { zookeeperMode, zookeeperQuorumSession, zookeeperUptimeMs } from '../probes.js';
import type { LocalRecipe, NodeLayout } from './recipe.js';

/** Debian's zookeeper.jar lists its dependencies in its manifest; slf4j-simple sends logs to stderr. */
const CLASSPATH = '/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar';

/**
 * The JVM settings that matter: a small heap (the machine is shared), `cnxTimeout=1000` so a leader change
 * takes seconds rather than ~19 s, and no fsync (a kill -9 does not lose the page cache, only power loss does).
 */
export const JVM_FLAGS = [
  '-Xmx256m',
  '-Xms32m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  // JDK 17's cgroup v1 metrics throw inside containers here, which kills ZooKeeper's JMX registry at start.
  '-XX:-UseContainerSupport',
  '-Dzookeeper.cnxTimeout=1000',
  '-Dzookeeper.forceSync=no',
  '-Dzookeeper.admin.enableServer=false',
  '-Dorg.slf4j.simpleLogger.defaultLogLevel=info',
  '-Dorg.slf4j.simpleLogger.showDateTime=true',
  '-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS',
];

/**
 * How long a member cut off from its leader keeps answering clients before it notices:
 * syncLimit × tickTime of the zoo.cfg below. ZooKeeper clients (@fencekit/zk's `followerLagMs`) must
 * take it off a session's validity, so the session timeouts used against these ensembles must exceed it.
 */
export const ZOOKEEPER_TICK_MS = 500;
export const ZOOKEEPER_SYNC_LIMIT = 4;
export const ZOOKEEPER_FOLLOWER_LAG_MS = ZOOKEEPER_TICK_MS * ZOOKEEPER_SYNC_LIMIT;

/** zoo.cfg for one member. Each member reaches the others through their peer proxies, itself directly. */
export function zooCfg(node: NodeLayout, all: readonly NodeLayout[], dataDir: string): string {
  const lines = [
    `tickTime=${ZOOKEEPER_TICK_MS}`,
    'initLimit=10',
    `syncLimit=${ZOOKEEPER_SYNC_LIMIT}`,
    `dataDir=${dataDir}`,
    `clientPort=${node.clientPort}`,
    `clientPortAddress=${node.listenHost}`,
    'maxSessionTimeout=60000',
    '4lw.commands.whitelist=*',
    'admin.enableServer=false',
    'reconfigEnabled=false',
    'standaloneEnabled=true',
    'preAllocSize=4096',
  ];
  if (all.length > 1) {
    for (const peer of all) {
      const ports = peer === node ? peer.peerPorts : peer.advertisedPeerPorts;
      const host = peer === node ? peer.listenHost : peer.advertisedHost;
      lines.push(`server.${peer.index}=${host}:${ports[0]}:${ports[1]}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** Protocol versions of QuorumCnxManager's InitialMessage that carry the sender's election address. */
const ADDRESS_PROTOCOLS = new Set([-65535n, -65536n]);

/**
 * ZooKeeper's election handshake (QuorumCnxManager InitialMessage: long protocol, long sid, int length, then
 * "host:port[|host:port]") carries the caller's own election address, and a server with a larger id drops the
 * connection and calls back *that* address, which is the caller's real port, bypassing its proxy. This rewrites
 * each real election address in it to the caller's election proxy, so partitions cut the call-back as well.
 */
export function electionHandshakeRewriter(proxyByAddress: ReadonlyMap<string, string>) {
  return (chunk: Buffer): Buffer => {
    if (chunk.length < 20 || !ADDRESS_PROTOCOLS.has(chunk.readBigInt64BE(0))) return chunk;
    const length = chunk.readInt32BE(16);
    if (length < 0 || chunk.length < 20 + length) return chunk;
    const addresses = chunk.toString('utf8', 20, 20 + length);
    const rewritten = Buffer.from(
      addresses
        .split('|')
        .map((address) => proxyByAddress.get(address) ?? address)
        .join('|'),
    );
    const header = Buffer.from(chunk.subarray(0, 20));
    header.writeInt32BE(rewritten.length, 16);
    return Buffer.concat([header, rewritten, chunk.subarray(20 + length)]);
  };
}

export const zookeeperRecipe: LocalRecipe = {
  server: 'zookeeper',
  peerPortCount: 2,
  clockShim: true,
  readyTimeoutMs: 60_000,
  launch(node, all) {
    const dataDir = join(node.dir, 'data');
    return {
      command: 'java',
      args: [...JVM_FLAGS, '-cp', CLASSPATH, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', 'zoo.cfg'],
      files: { 'zoo.cfg': zooCfg(node, all, dataDir), 'data/myid': `${node.index}\n` },
    };
  },
  // `ruok` answers before the server serves; only `srvr` reporting a Mode means it does.
  ready: async (target, timeoutMs) =>
    (await zookeeperMode(target.host, target.port, timeoutMs)) !== undefined,
  leader: (targets) => zookeeperLeader(targets),
  leaderAgreement: (targets) => zookeeperLeaderAgreement(targets),
  quorumRequest: (target, timeoutMs) => zookeeperQuorumSession(target.host, target.port, timeoutMs),
  readClock: async (target) => ({ ms: await zookeeperUptimeMs(target.host, target.port), wall: false }),
  peerHandshakeRewriter(portIndex, all) {
    if (portIndex !== 1) return undefined; // only the election port has the call-back
    const map = new Map(
      all.map((n) => [
        `${n.listenHost}:${n.peerPorts[1]}`,
        `${n.advertisedHost}:${n.advertisedPeerPorts[1]}`,
      ]),
    );
    return electionHandshakeRewriter(map);
  },
};
