import type { RedisReplication } from '../replication.js';
import type { ClusterNode, Topology } from '../types.js';
import type { ClientProxies } from './client-proxies.js';
import type { EffectSources } from './effects.js';
import type { TopologyFault } from './support.js';

/**
 * The cluster as the nemesis sees it: its members, what it cannot do, how to wait for a member to serve, and where
 * the probes of a fault's effect reach each member.
 */
export interface FaultTarget<N extends ClusterNode> extends Omit<EffectSources<N>, 'processState'> {
  readonly topology: Topology;
  /** Why each fault this cluster cannot apply would do nothing. */
  readonly unsupported: Partial<Record<TopologyFault, string>>;
  readonly nodes: readonly ClusterNode[];
  /** The member, or `UnknownNodeError`. */
  node(id: string): N;
  /** Waits, bounded, until the server serves clients (again). */
  waitReady(node: N): Promise<void>;
  /** Replicated Redis: roles and promotions (failover, splitBrain). */
  readonly replication: RedisReplication | undefined;
}

/**
 * What a provider does for the nemesis: the few acts that differ between processes on loopback and servers inside
 * containers. Everything else (argument checks, what is broken and must be healed, the order of a heal) is
 * provider-neutral and lives in `FaultController`.
 */
export interface FaultPrimitives<N extends ClusterNode> {
  /** The proxies on the clients' path (the same kind for both providers). */
  readonly clients: ClientProxies;
  /** Whether the server process is running (paused counts as running; killed, exited or a zombie does not). */
  running(node: N): Promise<boolean>;
  /** The server process' state letter from /proc (R, S, T, Z…), or undefined when there is none: for probes. */
  processState(node: N): Promise<string | undefined>;
  /** SIGKILL the server; resolves once it is gone. Does nothing when it is not running. */
  kill(node: N): Promise<void>;
  /** Starts the (killed) server again with the same command line, port and data dir; does not wait for it. */
  start(node: N): Promise<void>;
  /** SIGSTOP / SIGCONT of the server process; throws when there is no running process to signal. */
  signal(node: N, signal: 'STOP' | 'CONT'): Promise<void>;
  /** Cuts the server ↔ server links of these pairs, on top of those already cut. */
  cutLinks(pairs: ReadonlyArray<readonly [string, string]>): Promise<void>;
  /** Lets every server ↔ server link flow again. */
  healLinks(): Promise<void>;
  /** Sets the clock shim's skew; throws `UnsupportedFaultError` when this node has no shim the provider can reach. */
  writeClock(node: N, offsetMs: number, rate: number): Promise<void>;
}
