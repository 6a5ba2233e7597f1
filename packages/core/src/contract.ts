/**
 * The lock contract every fencekit backend implements. Semantics, not mechanics: how a backend grants
 * and fences is its own business; what a holder may rely on is fixed here.
 */

/**
 * A fencing token: strictly increasing per resource across all holders, so a protected resource can
 * refuse any write carrying a token lower than one it has already accepted. Backends that cannot
 * promise this (Redlock) use `undefined` as their fence type, so the compiler stops code that needs
 * fences from using them. A backend may compose a fence of several parts as long as comparing fences
 * as numbers is their order: @fencekit/redis's epoch fences are epoch × 10^12 + counter.
 */
export type Fence = bigint;

export interface AcquireOptions {
  /** How long the lock stays held without extension. Must be a positive finite number of ms. */
  ttlMs: number;
  /**
   * How long to wait for a held lock before failing with `LockTimeoutError`. Default 30 000 ms: no
   * acquire waits forever. Pass `signal` to cancel earlier; whichever comes first ends the wait.
   */
  waitMs?: number;
  /**
   * Cancels a waiting acquire with `LockAbortedError`. Clean-up on cancel: any grant that raced with
   * the abort is released before the promise rejects, so nothing is left held behind the caller.
   */
  signal?: AbortSignal;
}

export interface TryAcquireOptions {
  ttlMs: number;
  signal?: AbortSignal;
}

export interface ExtendOptions {
  signal?: AbortSignal;
}

/**
 * A granted lock. `fence` is typed by the backend: `bigint` where it is safe, `undefined` where not.
 */
export interface Lease<F extends Fence | undefined = Fence> extends AsyncDisposable {
  readonly resource: string;
  /** Unguessable token naming this grant; the backend checks it on extend and release. */
  readonly owner: string;
  readonly fence: F;
  /**
   * Until when (on `monotonicNow()`, ms) the lease is safe to act under: counted from when the
   * acquire or extend request was sent, drift subtracted. Past this instant the holder must stop.
   */
  readonly validUntil: number;
  /**
   * Aborted when the lease is lost, expires, is released, or its holder is unsure (e.g. a ZooKeeper
   * connection is suspended). Pass it to every I/O done under the lock. `signal.reason` is a
   * `LockLostError` (or the release reason) saying why.
   */
  readonly signal: AbortSignal;
  /** True until the lease is released, lost or past `validUntil`. */
  readonly held: boolean;
  /**
   * Pushes expiry to `ttlMs` from now (from when the request is sent). Throws `LockLostError` if
   * the lease is no longer held, `IndeterminateError` if the backend did not answer.
   */
  extend(ttlMs: number, options?: ExtendOptions): Promise<void>;
  /**
   * Gives the lock up. Idempotent for the holder. Throws `NotLockHolderError` if the backend says
   * someone else holds it now (this lease had been lost): the other holder is left untouched.
   */
  release(): Promise<void>;
}

/** What a backend can and cannot promise; the conformance suite skips only what is truly missing. */
export interface LockCapabilities {
  /** Fences strictly increase across all holders of a resource. False for Redlock. */
  readonly safeFences: boolean;
  /** Waiters are granted in arrival order. */
  readonly fair: boolean;
  /** Survives the loss of a minority of servers. */
  readonly faultTolerant: boolean;
}

export interface LockClient<F extends Fence | undefined = Fence> {
  /** Backend name for messages and reports: "redis", "redlock", "zookeeper", "etcd", "memory". */
  readonly backend: string;
  readonly capabilities: LockCapabilities;
  /** Waits (without polling where the backend allows) until the lock is granted, up to `waitMs`. */
  acquire(resource: string, options: AcquireOptions): Promise<Lease<F>>;
  /** One attempt: the lease, or `null` if someone else holds the lock. */
  tryAcquire(resource: string, options: TryAcquireOptions): Promise<Lease<F> | null>;
  /**
   * Releases every lease this client still holds (best effort), stops waiters with
   * `ClientClosedError`, and leaves no timers, sockets or processes behind.
   */
  close(): Promise<void>;
}

// ---- leader election -------------------------------------------------------------------------

export interface LeaderInfo {
  readonly candidate: string;
  /** Strictly increasing across successive leaders: usable as a fence. */
  readonly term: Fence;
}

export interface CampaignOptions {
  /** Cancels the campaign; the candidate's entry is withdrawn before the promise rejects. */
  signal?: AbortSignal;
  /** How long to campaign before `LockTimeoutError`. Default: until `signal`, else 30 000 ms. */
  waitMs?: number;
}

export interface Leadership extends AsyncDisposable {
  readonly election: string;
  readonly candidate: string;
  /** Fence for writes made as leader. */
  readonly term: Fence;
  /** Aborted the moment leadership is lost or unsure; `reason` says why. */
  readonly signal: AbortSignal;
  readonly isLeader: boolean;
  /** Steps down; the next candidate takes over. Idempotent. */
  resign(): Promise<void>;
}

export interface Election {
  readonly name: string;
  /** Waits to become leader. */
  campaign(candidate: string, options?: CampaignOptions): Promise<Leadership>;
  /** The current leader, or null when there is none. */
  leader(options?: { signal?: AbortSignal }): Promise<LeaderInfo | null>;
  /**
   * Leader changes as they happen, starting with the current one (null = no leader). Ends when
   * `signal` aborts or the election is closed.
   */
  observe(options?: { signal?: AbortSignal }): AsyncIterable<LeaderInfo | null>;
  close(): Promise<void>;
}

export interface ElectionClient {
  /** `ttlMs` bounds how long a dead leader keeps leadership (session / lease TTL). */
  election(name: string, options: { ttlMs: number }): Election;
}
