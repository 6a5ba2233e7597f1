import type { EffectQuery, Observation } from './faults/effects.js';
import type { PromotionQuery } from './faults/promotion.js';
import type { SshOptions } from './ssh/options.js';

export type Topology =
  | 'redis'
  | 'redis-independent'
  | 'redis-sentinel'
  | 'redis-cluster'
  | 'etcd'
  | 'zookeeper';
export type ProviderName = 'local' | 'docker' | 'ssh';
/** Where a cluster's servers are: started by a provider, or someone else's, attached to (`attachCluster`). */
export type ClusterProvider = ProviderName | 'external';

export interface ClusterOptions {
  readonly topology: Topology;
  /**
   * redis 1, redis-independent 5, redis-sentinel 3 (a primary and 2 replicas, a Sentinel beside each),
   * redis-cluster 6 (3 primaries, a replica each), etcd 3, zookeeper 3 by default; 1 means a single node.
   * Provider 'ssh': the machines, one member each, as 'host' or 'host:port' (the ssh port).
   */
  readonly nodes?: number | readonly string[];
  /** Default 'local'. 'ssh' runs each member on a machine of `nodes`: never point it at production (it wipes). */
  readonly provider?: ProviderName;
  /** Provider 'ssh': how to log in and where to collect the servers' logs. */
  readonly ssh?: SshOptions;
  /** Put a fault proxy in front of each node's client port (default false). */
  readonly proxy?: boolean;
  /** Aborts the start; whatever was already started is torn down. */
  readonly signal?: AbortSignal;
  /** Bound on the whole start, default 90 s. */
  readonly startTimeoutMs?: number;
  /**
   * Load the clock shim into the servers that can take it (Redis, ZooKeeper; default true). With false they run
   * unmodified and clock faults throw `UnsupportedFaultError`, as they do when the shim cannot be built.
   */
  readonly clockShim?: boolean;
}

export interface ClusterNode {
  /** 'n1', 'n2', … */
  readonly id: string;
  /** What clients use: '127.0.0.1:port', through the proxy when the cluster has one. */
  readonly endpoint: string;
  /** The server's own client port, bypassing the proxy. */
  readonly directEndpoint: string;
  /** Local provider: the server's current pid (changes on restart). */
  readonly pid?: number;
  /** Docker provider: the container id. */
  readonly containerId?: string;
}

/** Toxiproxy's directions: upstream is client → server, downstream is server → client. */
export type Direction = 'upstream' | 'downstream' | 'both';

/** Toxiproxy's vocabulary for what a proxy does to the bytes it forwards. */
export type Toxic =
  /** Delays every chunk by latency ± jitter (order is kept). */
  | {
      readonly type: 'latency';
      readonly latencyMs: number;
      readonly jitterMs?: number;
      readonly direction?: Direction;
    }
  /** Limits throughput to `rateKBps` kilobytes per second. */
  | { readonly type: 'bandwidth'; readonly rateKBps: number; readonly direction?: Direction }
  /** Drops all data; closes the connection after `timeoutMs`, or never when 0 (a black hole). */
  | { readonly type: 'timeout'; readonly timeoutMs: number; readonly direction?: Direction }
  /** Resets connections (TCP RST) after `timeoutMs` (default 0: at once, and every new one). */
  | { readonly type: 'reset_peer'; readonly timeoutMs?: number; readonly direction?: Direction }
  /** Delays the close (FIN) of a connection by `delayMs`. */
  | { readonly type: 'slow_close'; readonly delayMs: number; readonly direction?: Direction };

export type PartitionSpec =
  /** Cut every link between this node and all the others. */
  | { readonly isolate: string }
  /** Cut every link between the two groups; links inside a group stay. */
  | { readonly halves: readonly [readonly string[], readonly string[]] };

export interface LatencyOptions {
  readonly ms: number;
  readonly jitterMs?: number;
  readonly direction?: Direction;
}

export interface ClockOptions {
  /** Jump: the server's clocks read this much ahead (negative: behind) of the real ones. */
  readonly offsetMs: number;
  /** Drift: the server's clocks advance `rate` seconds per real second from now on (default 1). */
  readonly rate?: number;
}

/** The nemesis primitives. Every call is bounded in time; `heal()` undoes everything and is idempotent. */
export interface Faults {
  /** SIGKILL the server (kill -9). */
  kill(id: string): Promise<void>;
  /** Start a killed server again on the same port and data dir, and wait until it serves. */
  restart(id: string): Promise<void>;
  /** SIGSTOP: the honest GC pause. */
  pause(id: string): Promise<void>;
  /** SIGCONT. */
  resume(id: string): Promise<void>;
  /** Cut links between servers (peers). Connections hang as under a packet-dropping firewall. */
  partition(spec: PartitionSpec): Promise<void>;
  /** Cut client ↔ server for one node (needs `proxy: true`). */
  cutClients(id: string): Promise<void>;
  /**
   * Cut one client process off from every node (needs `proxy: true`): its connections, open and new, are held
   * without a byte passing (or, with `reset`, reset with an RST) until `heal()`; other clients are untouched.
   * The proxies tell the process by the kernel's socket tables (/proc), so it must run on this host. Resolves
   * with how many of its open connections were hit.
   */
  cutProcess(pid: number, options?: { reset?: boolean }): Promise<number>;
  /** Add latency between clients and one node (needs `proxy: true`). */
  latency(id: string, options: LatencyOptions): Promise<void>;
  /** Add any Toxiproxy-style toxic between clients and one node (needs `proxy: true`). */
  toxic(id: string, toxic: Toxic): Promise<void>;
  /** Skew one server's clock (LD_PRELOAD shim; unsupported on etcd, whose Go runtime bypasses libc). */
  clock(id: string, options: ClockOptions): Promise<void>;
  /**
   * redis-sentinel, redis-cluster: a replica of `node` (default: the current primary) is promoted, gracefully or
   * after the primary is killed (`FailoverOptions`). Resolves once the act is done, not once the promotion is:
   * `observe({ fault: 'failover', node: from, phase: 'started' })` waits for that. `UnsupportedFaultError` on
   * other topologies.
   */
  failover(options?: FailoverOptions): Promise<PromotionFault>;
  /**
   * redis-sentinel, redis-cluster: the primary `node` (default: the current one) is cut from every other node
   * (its replicas, the other Sentinels, the other cluster nodes) while its clients keep reaching it; the other
   * side promotes a replica, so two primaries take writes. `heal()` lets the links flow; the old primary is turned
   * into a replica of the new one and loses the writes it took meanwhile. `UnsupportedFaultError` elsewhere.
   */
  splitBrain(options?: { readonly node?: string }): Promise<PromotionFault>;
  /**
   * Undo every fault: resume, restart the killed, reconnect, remove toxics, reset clocks; on replicated Redis it
   * then waits (bounded) until one primary per shard serves with its replicas linked. Idempotent.
   */
  heal(): Promise<void>;
  /**
   * An independent probe of a fault's effect (process state, a request through the proxy, each member's leader,
   * the server's clock): waits, bounded, until the effect shows (`phase: 'started'`) or is gone (`'healed'`), and
   * says what it saw and after how long; `seen: false` when it never did.
   */
  observe(query: EffectQuery | PromotionQuery): Promise<Observation>;
}

/** How a `failover` promotes a replica. */
export interface FailoverOptions {
  /**
   * 'graceful' (default): `SENTINEL FAILOVER <master>` / `CLUSTER FAILOVER` on the primary's replica, the
   * primary alive and demoted. 'kill': the primary is SIGKILLed; the Sentinels (or the cluster's other primaries)
   * notice it down and promote a replica; `heal()` restarts it (empty: no persistence) and it rejoins as a replica.
   */
  /**
   * 'lagged': the failover that loses writes, as replication lag makes it in production. The primary's replication
   * links to its replicas are cut (the peer proxies / iptables hold the bytes, as a congested or lossy network
   * does) while its clients still reach it, so for `lagMs` it acknowledges writes no replica has; then it is
   * SIGKILLed and a replica, none of which saw those writes, is promoted (by the Sentinels, or by the cluster's
   * automatic failover). Resolves once a replica is primary (bounded; the links flow again then, unless a
   * partition or split brain is also in force), with the lag it left (`PromotionFault.lag`); `heal()` restarts the
   * old primary and waits until it is a replica.
   */
  readonly how?: 'graceful' | 'kill' | 'lagged';
  /** The primary to fail over (redis-cluster: which shard); default the current primary (of slot 0's shard). */
  readonly node?: string;
  /** 'lagged' only: how long the primary takes writes its replicas never get, in ms (default 1000, at most 2000). */
  readonly lagMs?: number;
}

/** What a 'lagged' failover left behind at the kill: how far each replica was behind the primary. */
export interface FailoverLag {
  /** How long the replication links were cut before the kill, as measured (ms). */
  readonly windowMs: number;
  /** The primary's `master_repl_offset` right before the kill (undefined: it did not answer). */
  readonly primaryOffset: number | undefined;
  /** Each replica's `slave_repl_offset` right before the kill (undefined: it did not answer). */
  readonly replicaOffsets: Readonly<Record<string, number | undefined>>;
}

/** What a `failover` or `splitBrain` acted on. */
export interface PromotionFault {
  /** The primary when the fault was applied: the node demoted, killed or isolated. */
  readonly from: string;
  /** A 'lagged' failover: the replication lag at the kill, in bytes of the replication stream per replica. */
  readonly lag?: FailoverLag;
}

/** What a client needs to reach a `redis-sentinel` deployment through its Sentinels. */
export interface SentinelEndpoints {
  /** The name the Sentinels monitor the primary under (`sentinel monitor <name>`). */
  readonly masterName: string;
  /** '127.0.0.1:port' of each Sentinel, at its own port: clients reach them whatever is partitioned. */
  readonly endpoints: readonly string[];
}

export interface WaitForLeaderOptions {
  readonly not?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface Cluster extends AsyncDisposable {
  readonly topology: Topology;
  readonly provider: ClusterProvider;
  /** Client-facing '127.0.0.1:port', one per node (through the proxy when `proxy: true`). */
  readonly endpoints: readonly string[];
  readonly nodes: readonly ClusterNode[];
  readonly faults: Faults;
  /**
   * The id of the current leader (etcd, ZooKeeper), the current primary (redis-sentinel: as a majority of the
   * Sentinels name it), or undefined when none is known or the topology has none (redis-cluster: see `primaries`).
   */
  leader(): Promise<string | undefined>;
  /**
   * The primaries now: redis-sentinel the one a majority of Sentinels names, redis-cluster those holding slots as a
   * majority of the nodes see them (sorted); elsewhere the leader, if any.
   */
  primaries(): Promise<string[]>;
  /** redis-sentinel: the master name and the Sentinels' addresses (ioredis `{ sentinels, name }`). */
  readonly sentinel?: SentinelEndpoints;
  /**
   * redis-sentinel, redis-cluster: the addresses the servers announce to each other (their peer proxies, so that
   * partitions cut replication) mapped to each node's client endpoint. Sentinel and CLUSTER SLOTS/MOVED answers
   * name the former: pass this as ioredis' `natMap` so clients take the client path.
   */
  readonly natMap?: Readonly<Record<string, { readonly host: string; readonly port: number }>>;
  /**
   * Polls `leader()` until a leader (other than `not`, e.g. the one just isolated) is known; bounded by `timeoutMs`
   * (default 30 s). Rejects on timeout or abort.
   */
  waitForLeader(options?: WaitForLeaderOptions): Promise<string>;
  /** Kills every process or container, removes temp dirs and networks. Idempotent. */
  close(): Promise<void>;
}
