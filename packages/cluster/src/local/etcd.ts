import { join } from 'node:path';
import { etcdLeader, etcdLeaderAgreement } from '../leader.js';
import { etcdHealthy, etcdQuorumRead } from '../probes.js';
import type { LocalRecipe, NodeLayout } from './recipe.js';

const peerUrl = (node: NodeLayout) => `http://${node.advertisedHost}:${node.advertisedPeerPorts[0]}`;

/**
 * etcd members advertise their peer proxy's port, so every raft link between members passes a proxy that
 * can cut it. Heartbeat and election timeouts stay at etcd's defaults (100 ms / 1 s).
 */
export const etcdRecipe: LocalRecipe = {
  server: 'etcd',
  peerPortCount: 1,
  clockShim: false,
  readyTimeoutMs: 30_000,
  launch(node, all, clusterToken) {
    return {
      command: 'etcd',
      args: [
        `--name=${node.id}`,
        `--data-dir=${join(node.dir, 'data')}`,
        `--listen-client-urls=http://${node.listenHost}:${node.clientPort}`,
        `--advertise-client-urls=http://${node.advertisedHost}:${node.advertisedClientPort}`,
        `--listen-peer-urls=http://${node.listenHost}:${node.peerPorts[0]}`,
        `--initial-advertise-peer-urls=${peerUrl(node)}`,
        `--initial-cluster=${all.map((n) => `${n.id}=${peerUrl(n)}`).join(',')}`,
        `--initial-cluster-token=${clusterToken}`,
        '--initial-cluster-state=new',
        '--logger=zap',
        '--log-outputs=stderr',
      ],
    };
  },
  ready: (target, timeoutMs) => etcdHealthy(target.host, target.port, timeoutMs),
  leader: (targets) => etcdLeader(targets),
  leaderAgreement: (targets) => etcdLeaderAgreement(targets),
  quorumRequest: (target, timeoutMs) => etcdQuorumRead(target.host, target.port, timeoutMs),
};
