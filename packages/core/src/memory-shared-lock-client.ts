import { randomBytes } from 'node:crypto';
import { monotonicNow } from './clock.js';
import type { AcquireOptions, LockCapabilities, TryAcquireOptions } from './contract.js';
import type {
  ReadWriteLock,
  ReadWriteLockClient,
  ReadWriteMode,
  Semaphore,
  SemaphoreAcquireOptions,
  SemaphoreClient,
  SemaphoreOptions,
  SemaphoreTryAcquireOptions,
} from './contract-shared.js';
import { ClientClosedError, LockAbortedError, LockLostError, LockTimeoutError } from './errors.js';
import { freshLease, type GrantedLease, type ManagedLease } from './lease.js';
import { MemoryPermitServer, type PermitGrant } from './memory-permit-server.js';
import { readWriteLockOf, readWriteWeight } from './read-write-lock.js';
import { ManagedReadWriteLease, ManagedSemaphoreLease } from './shared-lease.js';
import {
  normalizeSemaphore,
  normalizeSemaphoreAcquire,
  normalizeSemaphoreTryAcquire,
} from './shared-validate.js';
import { assertResource, MAX_PERMITS, normalizeAcquire, normalizeTryAcquire } from './validate.js';

export interface MemorySharedLockClientOptions {
  /** The shared state clients contend on. Default: one server per process, shared by every client. */
  server?: MemoryPermitServer;
  /** Name used in error messages. Default "memory shared-lock client". */
  name?: string;
}

let defaultServer: MemoryPermitServer | undefined;

/** The process-wide permit server clients share when none is given. */
export function defaultMemoryPermitServer(): MemoryPermitServer {
  defaultServer ??= new MemoryPermitServer();
  return defaultServer;
}

/** How one grant is asked for on the permit engine. */
interface PermitRequest {
  /** The engine key: semaphores and read-write locks of one name never share state. */
  readonly key: string;
  readonly name: string;
  readonly limit: number;
  readonly weight: number;
  readonly ttlMs: number;
}

type MakeLease<L> = (grant: GrantedLease<bigint>) => L;

/**
 * The reference semaphores and read-write locks, for one process: tests, demos, the embedded default.
 * Both are recipes on one engine (`MemoryPermitServer`): a semaphore of N permits is N units, a
 * read-write lock is `MAX_PERMITS` units of which a reader takes 1 and a writer all. Safe fences (one
 * counter per name, raised by every grant), strict FIFO, not fault tolerant.
 */
export class MemorySharedLockClient implements SemaphoreClient<bigint>, ReadWriteLockClient<bigint> {
  readonly backend = 'memory';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: false };
  readonly #server: MemoryPermitServer;
  readonly #name: string;
  readonly #leases = new Set<ManagedLease<bigint>>();
  readonly #waiters = new Set<(error: Error) => void>();
  #closed = false;

  constructor(options: MemorySharedLockClientOptions = {}) {
    this.#server = options.server ?? defaultMemoryPermitServer();
    this.#name = options.name ?? 'memory shared-lock client';
  }

  semaphore(name: string, options: SemaphoreOptions): Semaphore<bigint> {
    const checked = normalizeSemaphore(name, options);
    const key = `semaphore:${checked.name}`;
    const make =
      (permits: number): MakeLease<ManagedSemaphoreLease<bigint>> =>
      (grant) =>
        new ManagedSemaphoreLease(grant, permits);
    return {
      name: checked.name,
      permits: checked.permits,
      acquire: (acquireOptions: SemaphoreAcquireOptions) => {
        const request = normalizeSemaphoreAcquire(checked.name, checked.permits, acquireOptions);
        const permit = {
          key,
          name: checked.name,
          limit: checked.permits,
          weight: request.permits,
          ttlMs: request.ttlMs,
        };
        return this.#acquire(permit, request, make(request.permits));
      },
      tryAcquire: async (tryOptions: SemaphoreTryAcquireOptions) => {
        const request = normalizeSemaphoreTryAcquire(checked.name, checked.permits, tryOptions);
        const permit = {
          key,
          name: checked.name,
          limit: checked.permits,
          weight: request.permits,
          ttlMs: request.ttlMs,
        };
        return this.#tryAcquire(permit, request.signal, make(request.permits));
      },
    };
  }

  readWriteLock(name: string): ReadWriteLock<bigint> {
    assertResource(name);
    const key = `rwlock:${name}`;
    const permit = (mode: ReadWriteMode, ttlMs: number): PermitRequest => ({
      key,
      name,
      limit: MAX_PERMITS,
      weight: readWriteWeight(mode),
      ttlMs,
    });
    const make =
      (mode: ReadWriteMode): MakeLease<ManagedReadWriteLease<bigint>> =>
      (grant) =>
        new ManagedReadWriteLease(grant, mode);
    const acquire = (mode: ReadWriteMode, options: AcquireOptions) => {
      const request = normalizeAcquire(name, options);
      return this.#acquire(permit(mode, request.ttlMs), request, make(mode));
    };
    const tryAcquire = async (mode: ReadWriteMode, options: TryAcquireOptions) => {
      const request = normalizeTryAcquire(name, options);
      return this.#tryAcquire(permit(mode, request.ttlMs), request.signal, make(mode));
    };
    return readWriteLockOf(name, acquire, tryAcquire);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new ClientClosedError(this.#name);
    for (const stop of [...this.#waiters]) stop(closed);
    await Promise.allSettled([...this.#leases].map((lease) => lease.release()));
  }

  async #tryAcquire<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    signal: AbortSignal | undefined,
    make: MakeLease<L>,
  ): Promise<L | null> {
    this.#assertOpen();
    if (signal?.aborted) throw new LockAbortedError(permit.name, { cause: signal.reason });
    const owner = newOwner();
    const sentAt = monotonicNow();
    const grant = this.#server.tryGrant(permit.key, permit.limit, owner, permit.weight, permit.ttlMs);
    return grant ? freshLease(this.#lease(permit, grant, sentAt, make)) : null;
  }

  async #acquire<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    request: { waitMs: number; signal: AbortSignal | undefined },
    make: MakeLease<L>,
  ): Promise<L> {
    this.#assertOpen();
    const { signal, waitMs } = request;
    if (signal?.aborted) throw new LockAbortedError(permit.name, { cause: signal.reason });
    const owner = newOwner();
    const sentAt = monotonicNow();
    const grant = this.#server.tryGrant(permit.key, permit.limit, owner, permit.weight, permit.ttlMs);
    if (grant) return freshLease(this.#lease(permit, grant, sentAt, make));
    if (waitMs === 0) throw new LockTimeoutError(permit.name, 0);
    const granted = await new Promise<L>((resolve, reject) => {
      // As in MemoryLockClient: the grant may come synchronously inside `enqueue`.
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (): void => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(stop);
      };
      const cancel = this.#server.enqueue(
        permit.key,
        permit.limit,
        owner,
        permit.weight,
        permit.ttlMs,
        (given) => {
          finish();
          resolve(this.#lease(permit, given, given.grantedAt, make));
        },
      );
      function stop(error: Error): void {
        if (!cancel()) return;
        finish();
        reject(error);
      }
      function onAbort(): void {
        stop(new LockAbortedError(permit.name, { cause: signal?.reason }));
      }
      if (settled) return;
      timer = setTimeout(() => stop(new LockTimeoutError(permit.name, waitMs)), waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(stop);
    });
    return freshLease(granted);
  }

  #lease<L extends ManagedLease<bigint>>(
    permit: PermitRequest,
    grant: PermitGrant,
    sentAt: number,
    make: MakeLease<L>,
  ): L {
    const server = this.#server;
    const { key, name } = permit;
    const lease = make({
      resource: name,
      owner: grant.owner,
      fence: grant.fence,
      sentAt,
      ttlMs: permit.ttlMs,
      operations: {
        async extend(extendMs) {
          if (!server.extend(key, grant.owner, extendMs)) {
            throw new LockLostError(name, 'the grant is no longer held by this lease');
          }
        },
        // Nothing to refuse: a lapsed grant has nothing to give back (its signal said so).
        async release() {
          server.release(key, grant.owner);
        },
      },
      onEnd: (ended) => this.#leases.delete(ended as ManagedLease<bigint>),
      lazyExpiry: true,
    });
    this.#leases.add(lease);
    return lease;
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError(this.#name);
  }
}

/** Creates an in-memory semaphore and read-write lock client. */
export function createMemorySharedLockClient(
  options: MemorySharedLockClientOptions = {},
): MemorySharedLockClient {
  return new MemorySharedLockClient(options);
}

/** 128 random bits: unguessable, so no other holder can forge this grant's release. */
function newOwner(): string {
  return randomBytes(16).toString('hex');
}
