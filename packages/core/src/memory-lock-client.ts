import { randomBytes } from 'node:crypto';
import { monotonicNow } from './clock.js';
import type { AcquireOptions, Lease, LockCapabilities, LockClient, TryAcquireOptions } from './contract.js';
import {
  ClientClosedError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  NotLockHolderError,
} from './errors.js';
import { freshLease, ManagedLease } from './lease.js';
import { type MemoryGrant, MemoryLockServer } from './memory-lock-server.js';
import { normalizeAcquire, normalizeTryAcquire } from './validate.js';

export interface MemoryLockClientOptions {
  /** The shared state clients contend on. Default: one server per process, shared by every client. */
  server?: MemoryLockServer;
  /** Name used in error messages. Default "memory lock client". */
  name?: string;
}

let defaultServer: MemoryLockServer | undefined;

/** The process-wide server clients share when none is given. */
export function defaultMemoryLockServer(): MemoryLockServer {
  defaultServer ??= new MemoryLockServer();
  return defaultServer;
}

/**
 * The reference `LockClient`, for one process: tests, demos, and the embedded default.
 *
 * Semantics: safe fences (per resource, +1 per grant); fair (waiters granted in arrival order, on
 * release or expiry, without polling); not fault tolerant (the state lives in this process).
 * Validity of a waited-for grant counts from the moment of the grant, which on one clock is exact.
 */
export class MemoryLockClient implements LockClient<bigint> {
  readonly backend = 'memory';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: false };
  readonly #server: MemoryLockServer;
  readonly #name: string;
  readonly #leases = new Set<ManagedLease<bigint>>();
  /** Stops a pending acquire with the given error (a no-op once it has been granted). */
  readonly #waiters = new Set<(error: Error) => void>();
  #closed = false;

  constructor(options: MemoryLockClientOptions = {}) {
    this.#server = options.server ?? defaultMemoryLockServer();
    this.#name = options.name ?? 'memory lock client';
  }

  async acquire(resource: string, options: AcquireOptions): Promise<Lease<bigint>> {
    const request = normalizeAcquire(resource, options);
    this.#assertOpen();
    const { signal, waitMs, ttlMs } = request;
    if (signal?.aborted) throw new LockAbortedError(request.resource, { cause: signal.reason });
    const owner = newOwner();
    const sentAt = monotonicNow();
    const grant = this.#server.tryGrant(request.resource, owner, ttlMs);
    if (grant) return freshLease(this.#lease(request.resource, grant, sentAt, ttlMs));

    const granted = await new Promise<ManagedLease<bigint>>((resolve, reject) => {
      // A grant may come synchronously inside `enqueue` below, so everything `finish` touches is
      // declared (or hoisted) before it, and nothing is armed for a waiter already granted.
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (): void => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(stop);
      };
      // The server calls back synchronously, and cancelling is synchronous too: a waiter is
      // either granted or withdrawn, never both, so an abort can leave no grant behind.
      const cancel = this.#server.enqueue(request.resource, owner, ttlMs, (granted) => {
        finish();
        resolve(this.#lease(request.resource, granted, granted.grantedAt, ttlMs));
      });
      function stop(error: Error): void {
        if (!cancel()) return;
        finish();
        reject(error);
      }
      function onAbort(): void {
        stop(new LockAbortedError(request.resource, { cause: signal?.reason }));
      }
      if (settled) return;
      timer = setTimeout(() => stop(new LockTimeoutError(request.resource, waitMs)), waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(stop);
    });
    return freshLease(granted);
  }

  async tryAcquire(resource: string, options: TryAcquireOptions): Promise<Lease<bigint> | null> {
    const request = normalizeTryAcquire(resource, options);
    this.#assertOpen();
    if (request.signal?.aborted)
      throw new LockAbortedError(request.resource, { cause: request.signal.reason });
    const owner = newOwner();
    const sentAt = monotonicNow();
    const grant = this.#server.tryGrant(request.resource, owner, request.ttlMs);
    return grant ? freshLease(this.#lease(request.resource, grant, sentAt, request.ttlMs)) : null;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new ClientClosedError(this.#name);
    for (const stop of [...this.#waiters]) stop(closed);
    // Release is local and cannot fail for a holder; a lease already lost is simply forgotten.
    await Promise.allSettled([...this.#leases].map((lease) => lease.release()));
  }

  #lease(resource: string, grant: MemoryGrant, sentAt: number, ttlMs: number): ManagedLease<bigint> {
    const server = this.#server;
    const lease: ManagedLease<bigint> = new ManagedLease<bigint>({
      resource,
      owner: grant.owner,
      fence: grant.fence,
      sentAt,
      ttlMs,
      operations: {
        async extend(extendMs) {
          if (!server.extend(resource, grant.owner, extendMs)) {
            throw new LockLostError(resource, 'the lock is no longer held by this lease');
          }
        },
        async release() {
          if (server.release(resource, grant.owner) === 'held-by-other') {
            throw new NotLockHolderError(resource, grant.owner);
          }
        },
      },
      onEnd: () => this.#leases.delete(lease),
      lazyExpiry: true,
    });
    this.#leases.add(lease);
    return lease;
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError(this.#name);
  }
}

/** Creates an in-memory lock client; clients without an explicit `server` share one per process. */
export function createMemoryLockClient(options: MemoryLockClientOptions = {}): MemoryLockClient {
  return new MemoryLockClient(options);
}

/** 128 random bits: unguessable, so no other holder can forge this grant's release. */
function newOwner(): string {
  return randomBytes(16).toString('hex');
}
