import type { ElectionClient, Fence, LockClient } from '@fencekit/core';
import type { SharedLocks } from '../backends/shared-locks.js';
import type { BackendName, ClientBackend } from '../backends/types.js';
import type { OpRecorder } from '../client/recorder.js';
import type { ResourceClient } from '../resource/client.js';

export const WORKLOADS = ['inventory', 'mutex', 'election', 'cron', 'cas', 'semaphore', 'rwlock'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];

/** Everything a client process is told at start; JSON, sent over IPC. */
export interface ClientConfig {
  /** Lane of this client, 0 … clients−1; its first process id in the history. */
  index: number;
  clients: number;
  backend: BackendName;
  endpoints: string[];
  namespace: string;
  resourceSocket: string;
  workload: WorkloadName;
  fencing: boolean;
  ttlMs: number;
  /** `--session` as given (ZooKeeper's session timeout set apart from the TTL); absent = from the TTL. */
  askedSessionMs?: number;
  /**
   * How long the servers keep a silent client's lease (`Run.sessionMs`: the session timeout, the etcd
   * lease as granted, else the TTL): what a client whose release failed waits out (sections.ts).
   */
  sessionMs: number;
  /** The gap between a client's last validity check and its write reaching the resource. */
  windowMs: number;
  opTimeoutMs: number;
  /** Blocking acquire, or polling with tryAcquire (see acquire.ts). */
  acquire: 'wait' | 'poll';
  /** At each window, wait for the coordinator's go-ahead (see run.ts) before the window's sleep. */
  windowAck: boolean;
  /** Cron tick length. */
  tickMs: number;
  seed: number;
  /** `--abort-rate`: the share of acquires given up while in flight (cancel.ts); absent = 0. */
  abortRate?: number;
}

export interface WorkloadContext {
  readonly config: ClientConfig;
  readonly locks: LockClient<Fence | undefined>;
  readonly elections: ElectionClient | undefined;
  /** Semaphores and read-write locks: opened only for the `semaphore` and `rwlock` workloads. */
  readonly sharedLocks?: SharedLocks | undefined;
  /** The store-side guard, used for writes when fencing is on and the backend has one. */
  readonly guardedWrite: ClientBackend['guardedWrite'];
  /** When grant requests were sent, where the server counts the TTL from them (`ClientBackend.sends`). */
  readonly sends?: ClientBackend['sends'];
  readonly resource: ResourceClient;
  readonly recorder: OpRecorder;
  /** Aborted when the coordinator asks the client to stop. */
  readonly stopping: AbortSignal;
  /**
   * The vulnerable gap: tells the coordinator "I am between my check and my write" (a targeted client
   * pause lands here, like a GC pause in Kleppmann's diagram), then waits `windowMs`.
   */
  window(f: string): Promise<void>;
  random(): number;
}

export type Workload = (context: WorkloadContext) => Promise<void>;
