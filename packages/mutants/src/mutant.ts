import type { Fence, LockClient } from '@fencekit/core';

/** The backends a mutant can break (the harness's names). */
export type MutantBackend = 'redis' | 'redlock' | 'zk' | 'etcd';

/**
 * The run that should expose a mutant: the harness's own vocabulary (`fencekit run` options), so the
 * mutation command can run it as is. Faults and checkers are names, not imports: some land in the
 * harness later than the mutant, and the command reports a mutant whose fault it lacks as not run.
 */
export interface Exposure {
  workload: 'inventory' | 'mutex' | 'election' | 'cron' | 'semaphore' | 'rwlock';
  /** `--fault` names; empty = contention alone exposes it. */
  faults: readonly string[];
  /** Off where the resource's fence check would hide a second holder from the resource-side checkers. */
  fencing: boolean;
  /** Run length per seed (ms); default 10 s. */
  timeMs?: number;
  ttlMs?: number;
  /** `--session`: a ZooKeeper session timeout apart from the TTL (a TTL longer than the session). */
  sessionMs?: number;
  clients?: number;
  /** `--abort-rate`: the share of acquires given up while in flight. */
  abortRate?: number;
}

/** What an installed mutant asks the client process to do besides the patches it already made. */
export interface MutantHooks {
  /** Wraps the lock client the harness built (leases with a changed validity, a wrapped method). */
  wrapLocks?(locks: LockClient<Fence | undefined>): LockClient<Fence | undefined>;
}

/**
 * A deliberately broken variant of one adapter. `install` patches the adapter's classes in this
 * process (prototypes, an internal module reached by its file) or returns a wrapper for its client;
 * it never changes the adapter's shipped code, and it runs only in a harness client process that was
 * asked for this mutant.
 */
export interface Mutant {
  readonly name: string;
  readonly backend: MutantBackend;
  /** The contract promise the mutant breaks, in one sentence. */
  readonly breaks: string;
  /** Set when the mutant re-creates one of the five bugs of issue #13 as it was before its fix. */
  readonly bug?: string;
  readonly exposure: Exposure;
  /**
   * Checkers expected to convict it (the harness's names: mutex, fences, inventory, lease, liveness, bounds,
   * semaphore, semaphore-lease, rwlock, rwlock-lease).
   */
  readonly checkers: readonly string[];
  install(): Promise<MutantHooks>;
}

/** A name that is not in the registry; the message lists the known ones. */
export class UnknownMutantError extends Error {
  override readonly name = 'UnknownMutantError';
  constructor(
    readonly mutant: string,
    readonly known: readonly string[],
  ) {
    super(`unknown mutant "${mutant}"; known mutants: ${known.join(', ')}`);
  }
}

/** A patch target that is not where the mutant expects it (the adapter was restructured). */
export class MutantTargetError extends Error {
  override readonly name = 'MutantTargetError';
  constructor(mutant: string, target: string) {
    super(`mutant ${mutant}: cannot find ${target} in the adapter (was it renamed or moved?)`);
  }
}
