import type { ProbeTarget } from '../leader.js';

/** Where one node of a local cluster lives: its directory and ports. */
export interface NodeLayout {
  readonly id: string;
  /** 1-based, used as ZooKeeper's myid. */
  readonly index: number;
  readonly dir: string;
  /** The address the server binds: 127.0.0.1 for processes, 0.0.0.0 in a container. */
  readonly listenHost: string;
  /** The address other servers reach this one at: 127.0.0.1, or the container's IP. */
  readonly advertisedHost: string;
  /** The port the server binds for clients. */
  readonly clientPort: number;
  /** The port clients are told to use: the proxy's when there is one, else `clientPort`. */
  readonly advertisedClientPort: number;
  /**
   * Ports the server binds for its peers (etcd: peer; ZooKeeper: quorum, election; replicated Redis: its client
   * port, which replicas and Sentinels call, then the Sentinel's or the cluster bus' port).
   */
  readonly peerPorts: readonly number[];
  /** Ports the other servers use to reach this one: the peer proxy's, so links can be cut. */
  readonly advertisedPeerPorts: readonly number[];
}

export interface LaunchSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Files written (relative to the node dir) before the first start. */
  readonly files?: Readonly<Record<string, string>>;
}

/** How to run one kind of server as a local process. */
export interface LocalRecipe {
  readonly server: 'redis' | 'etcd' | 'zookeeper';
  /** How many peer ports each node needs besides its client port (0 when nodes never talk to each other). */
  readonly peerPortCount: number;
  /**
   * Peers also call the client port (Redis replication, Sentinels): it becomes the first peer port, with a peer
   * proxy in front of it like the others, so a partition cuts replication too.
   */
  readonly peersUseClientPort?: boolean;
  /** A second process per node, started and stopped with the server (a Sentinel beside each Redis). */
  companion?(node: NodeLayout, all: readonly NodeLayout[]): LaunchSpec & { readonly name: string };
  /** Replicated Redis: how its members are joined and how roles are read (`RedisReplication`). */
  readonly replication?: 'sentinel' | 'cluster';
  /** Whether the LD_PRELOAD clock shim can act on this server (not on Go binaries). */
  readonly clockShim: boolean;
  /** How long one node may take to become ready. */
  readonly readyTimeoutMs: number;
  launch(node: NodeLayout, all: readonly NodeLayout[], clusterToken: string): LaunchSpec;
  /** One readiness probe against a client port: true once the node serves clients. */
  ready(target: ProbeTarget, timeoutMs?: number): Promise<boolean>;
  /**
   * For peer ports whose handshake tells the other side where to call back (ZooKeeper's election port), a rewrite
   * of that first message so the call-back goes through the caller's peer proxy too.
   */
  peerHandshakeRewriter?(
    portIndex: number,
    all: readonly NodeLayout[],
  ): ((chunk: Buffer) => Buffer) | undefined;
  /** The leader's id, when the server kind has one. */
  leader?(targets: readonly ProbeTarget[]): Promise<string | undefined>;
  /**
   * Whether every member agrees on one leader, asked of each member (etcd: its status' leader; ZooKeeper: its
   * `srvr` Mode), and what each said: a partition shows as members that lost or disagree on the leader.
   */
  /** `silent`: the members that gave no answer at all (not evidence of a partition: merely stopped or slow). */
  leaderAgreement?(
    targets: readonly ProbeTarget[],
  ): Promise<{ agreed: boolean; detail: string; silent?: readonly string[] }>;
  /**
   * One reading of the server's own clock in ms, and whether it is a wall clock (comparable with ours) or only
   * runs (ZooKeeper's uptime); servers the clock shim can act on have one.
   */
  readClock?(target: ProbeTarget): Promise<{ ms: number; wall: boolean }>;
  /**
   * Whether a request that needs a quorum, sent to this member, completes within `timeoutMs` (etcd: a
   * linearizable read; ZooKeeper: opening a session): false on a member cut off from the majority.
   */
  quorumRequest?(target: ProbeTarget, timeoutMs: number): Promise<boolean>;
}
