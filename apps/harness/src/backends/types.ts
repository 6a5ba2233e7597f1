import type { EffectQuery, Observation, Topology } from '@fencekit/cluster';
import type { ElectionClient, Fence, Lease, LockClient } from '@fencekit/core';
import type { SendClock } from '../client/send-clock.js';

export const BACKENDS = [
  'memory',
  'redis',
  'redlock',
  'zk',
  'etcd',
  'redis-sentinel',
  'redis-cluster',
  'redis-sentinel-epoch',
  'redis-cluster-epoch',
  'redis-sentinel-wait',
  'redis-cluster-wait',
] as const;
export type BackendName = (typeof BACKENDS)[number];
/**
 * Where the servers run: started here (`local`), in containers (`docker`), on machines over ssh (`ssh`: installed,
 * started, faulted and wiped there), or someone else's (`external`: attached to by `--endpoints`, never started,
 * stopped or faulted, only the clients' path is).
 */
export type Provider = 'local' | 'docker' | 'ssh' | 'external';

/** `--provider ssh`: the machines and how to log in (a key's path, never its contents). */
export interface SshDeploy {
  readonly nodes: readonly string[];
  readonly user?: string;
  readonly keyPath?: string;
  readonly port?: number;
  readonly hostKeys?: 'strict' | 'accept-new';
  readonly knownHostsFile?: string;
  /** Where each node's server log and configuration are copied at close. */
  readonly collectDir?: string;
}

/**
 * The fault primitives a deployment offers, in @fencekit/cluster's vocabulary. A backend that lacks a
 * primitive throws `UnsupportedFaultError`; the nemesis records that instead of pretending.
 */
export interface FaultDriver {
  kill(node: string): Promise<void>;
  restart(node: string): Promise<void>;
  pause(node: string): Promise<void>;
  resume(node: string): Promise<void>;
  partition(spec: { isolate: string } | { halves: [string[], string[]] }): Promise<void>;
  cutClients(node: string): Promise<void>;
  /**
   * Every client connection to `node` is reset (TCP RST), and so is every new one, until heal: requests
   * to it fail at once and are lost, never delivered late (a cut or a frozen server delivers them on heal).
   * Through @fencekit/cluster's `reset_peer` toxic.
   */
  toxic(node: string, toxic: { type: 'reset_peer' }): Promise<void>;
  latency(node: string, spec: { ms: number; jitterMs: number }): Promise<void>;
  /**
   * One client process cut off from every node (held silent, or reset with `reset`), its open and new
   * connections, until heal; resolves with how many open ones it hit. Through @fencekit/cluster's proxies
   * (`Faults.cutProcess`); absent where clients do not pass a proxy (the memory backend).
   */
  cutProcess?(pid: number, options: { reset: boolean }): Promise<number>;
  clock(node: string, spec: { offsetMs: number; rate?: number }): Promise<void>;
  /** Replicated Redis only: a replica of the primary promoted (see @fencekit/cluster `Faults.failover`). */
  failover?(options: { how: 'graceful' | 'kill' | 'lagged'; node?: string }): Promise<{
    from: string;
    /** 'lagged': the replication offsets at the kill (@fencekit/cluster's `FailoverLag`). */
    lag?: {
      windowMs: number;
      primaryOffset: number | undefined;
      replicaOffsets: Readonly<Record<string, number | undefined>>;
    };
  }>;
  /** Replicated Redis only: the primary cut off with its clients while a replica is promoted. */
  splitBrain?(options: { node?: string }): Promise<{ from: string }>;
  heal(): Promise<void>;
  /**
   * An independent probe of a fault's effect (@fencekit/cluster's); absent where there is none (memory). Where
   * `failover` is offered it also takes @fencekit/cluster's `PromotionQuery` (see nemesis/observation.ts).
   */
  observe?(query: EffectQuery): Promise<Observation>;
}

export class UnsupportedFaultError extends Error {
  override readonly name = 'UnsupportedFaultError';
  readonly code = 'unsupported-fault';
  constructor(
    readonly fault: string,
    readonly backend: string,
  ) {
    super(`Fault ${fault} is not supported on ${backend}`);
  }
}

/** Servers running for one or more runs, seen from the coordinator. */
export interface Deployment {
  readonly backend: BackendName;
  readonly provider: Provider;
  /** Client-facing endpoints, handed to client processes as is. */
  readonly endpoints: string[];
  /** Server node ids, targets for server faults. */
  readonly nodes: string[];
  readonly faults: FaultDriver;
  /** The current leader's node id, where the servers elect one (etcd, ZooKeeper); undefined otherwise. */
  leader?(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** What a client process builds from the endpoints. */
export interface ClientBackend {
  readonly locks: LockClient<Fence | undefined>;
  /** A native election recipe; without one the election workload campaigns with the lock. */
  readonly elections?: ElectionClient;
  /**
   * The store's own guard, where it has one (etcd Txn on the lock key's create revision, ZooKeeper
   * multi check + set): writes `value` under `key` in the store only while `lease` still holds, and
   * throws `StaleFenceError` when the store refuses.
   */
  readonly guardedWrite?: (lease: Lease<Fence | undefined>, key: string, value: string) => Promise<void>;
  /**
   * Where the server counts a grant's TTL from receiving its request (Redis, Redlock): when that request
   * was sent, observed outside the adapter, so grants record `ttlMs` and `sentAt` for the lease check.
   * Absent where a lease's validity is not a request's TTL (ZooKeeper and etcd sessions, memory).
   */
  readonly sends?: SendClock;
  close(): Promise<void>;
}

export interface ConnectOptions {
  endpoints: string[];
  /** Isolates one run's keys from another's on a shared deployment. */
  namespace: string;
  /** The lock TTL the run uses, for backends whose session TTL is fixed at connect time. */
  ttlMs: number;
  /** The session timeout the run asked for (`--session`, ZooKeeper only); absent = from the TTL. */
  sessionMs?: number;
}

export interface DeployOptions {
  provider: Provider;
  /** `external`: each server's client endpoint, host:port (`--endpoints`). */
  endpoints?: readonly string[];
  /** `ssh`: the nodes and the login. */
  ssh?: SshDeploy;
  signal?: AbortSignal;
}

/**
 * One small file per backend implements this: how to start its servers (coordinator side) and how a
 * client process connects (client side). Adding a backend = adding one such file to the registry.
 */
export interface BackendFactory {
  readonly name: BackendName;
  readonly description: string;
  /** Fences strictly increase across holders, so fencing at the resource applies. */
  readonly safeFences: boolean;
  /** Faults that make sense for this backend's topology. */
  readonly faults: readonly string[];
  /** The @fencekit/cluster servers it runs on, so a run can refuse faults that topology cannot apply. */
  readonly cluster?: { readonly topology: Topology; readonly nodes: number };
  /**
   * The lock TTL runs use unless told otherwise: as short as the backend honours (ZooKeeper sessions
   * and etcd leases have floors), so faults outlast leases within a short run.
   */
  readonly defaultTtlMs: number;
  /**
   * How long the servers keep a lease of `ttlMs` whose client went silent (ZooKeeper: the session
   * timeout; etcd: the lease TTL as granted); the TTL itself when absent. Faults aimed at the lease
   * (stall-holder, flicker, suspend) are sized by it.
   */
  sessionMs?(ttlMs: number): number;
  /** A native election recipe exists (else the election workload campaigns with the lock). */
  readonly nativeElection: boolean;
  /** Throws a message saying how to install what is missing (server binary, Docker engine). */
  preflight(provider: Provider): Promise<void>;
  deploy(options: DeployOptions): Promise<Deployment>;
  connect(options: ConnectOptions): Promise<ClientBackend>;
}
