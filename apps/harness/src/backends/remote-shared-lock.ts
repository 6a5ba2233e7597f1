import {
  type AcquireOptions,
  BackendUnavailableError,
  ClientClosedError,
  freshLease,
  type GrantedLease,
  type LockCapabilities,
  LockTimeoutError,
  type ManagedLease,
  ManagedReadWriteLease,
  ManagedSemaphoreLease,
  monotonicNow,
  normalizeAcquire,
  normalizeSemaphore,
  normalizeSemaphoreAcquire,
  normalizeSemaphoreTryAcquire,
  normalizeTryAcquire,
  type ReadWriteLock,
  type ReadWriteLockClient,
  type ReadWriteMode,
  readWriteLockOf,
  type Semaphore,
  type SemaphoreClient,
  type TryAcquireOptions,
} from '@fencekit/core';
import { LineClient } from '../rpc/line-socket.js';
import { ANSWER_SLACK_MS, translate } from './remote-lock.js';

/** What one grant asks of the lock server's shared-lock engine (memory-shared-server.ts). */
type Ask =
  | { kind: 'semaphore'; name: string; limit: number; permits: number }
  | { kind: 'rwlock'; name: string; mode: ReadWriteMode };

/**
 * Semaphores and read-write locks in a client process, whose state lives in the memory backend's lock
 * server (as `RemoteLockClient` does for the mutex). Arguments are checked here with core's own
 * validation; validity is measured on this process's clock from each request's send.
 */
export class RemoteSharedLockClient implements SemaphoreClient<bigint>, ReadWriteLockClient<bigint> {
  readonly backend = 'memory';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: false };
  readonly #connection: LineClient;
  #closed = false;

  private constructor(connection: LineClient) {
    this.#connection = connection;
  }

  static async connect(socketPath: string): Promise<RemoteSharedLockClient> {
    try {
      return new RemoteSharedLockClient(await LineClient.connect(socketPath));
    } catch (error) {
      throw new BackendUnavailableError('memory', `lock server at ${socketPath}`, { cause: error });
    }
  }

  semaphore(name: string, options: { permits: number }): Semaphore<bigint> {
    const checked = normalizeSemaphore(name, options);
    const ask = (permits: number): Ask => ({
      kind: 'semaphore',
      name: checked.name,
      limit: checked.permits,
      permits,
    });
    const make = (permits: number) => (grant: GrantedLease<bigint>) =>
      new ManagedSemaphoreLease(grant, permits);
    return {
      name: checked.name,
      permits: checked.permits,
      acquire: async (o) => {
        const r = normalizeSemaphoreAcquire(checked.name, checked.permits, o);
        return required(
          this.#grant(ask(r.permits), r.ttlMs, r.waitMs, false, make(r.permits)),
          checked.name,
          r.waitMs,
        );
      },
      tryAcquire: async (o) => {
        const r = normalizeSemaphoreTryAcquire(checked.name, checked.permits, o);
        return this.#grant(ask(r.permits), r.ttlMs, 0, true, make(r.permits));
      },
    };
  }

  readWriteLock(name: string): ReadWriteLock<bigint> {
    const make = (mode: ReadWriteMode) => (grant: GrantedLease<bigint>) =>
      new ManagedReadWriteLease(grant, mode);
    const wait = async (mode: ReadWriteMode, o: AcquireOptions) => {
      const r = normalizeAcquire(name, o);
      return required(
        this.#grant({ kind: 'rwlock', name, mode }, r.ttlMs, r.waitMs, false, make(mode)),
        name,
        r.waitMs,
      );
    };
    const once = async (mode: ReadWriteMode, o: TryAcquireOptions) => {
      const r = normalizeTryAcquire(name, o);
      return this.#grant({ kind: 'rwlock', name, mode }, r.ttlMs, 0, true, make(mode));
    };
    return readWriteLockOf(name, wait, once);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#connection.close();
  }

  async #grant<L extends ManagedLease<bigint>>(
    ask: Ask,
    ttlMs: number,
    waitMs: number,
    once: boolean,
    make: (grant: GrantedLease<bigint>) => L,
  ): Promise<L | null> {
    if (this.#closed) throw new ClientClosedError('memory shared-lock client');
    const sentAt = monotonicNow();
    let reply: { owner: string; fence: string } | null;
    try {
      reply = await this.#connection.call(
        { op: 'shared-acquire', ...ask, ttlMs, waitMs, once },
        waitMs + ANSWER_SLACK_MS,
      );
    } catch (error) {
      throw translate(error, ask.name, 'acquire', waitMs);
    }
    // Only a single attempt answers "not now" (null); a wait that ran out is the server's LockTimeoutError.
    if (reply === null) return null;
    const { owner } = reply;
    const call = async (request: Record<string, unknown>, operation: 'extend' | 'release') => {
      try {
        await this.#connection.call(request, ANSWER_SLACK_MS);
      } catch (error) {
        throw translate(error, ask.name, operation, 0, owner);
      }
    };
    // Validity counts from the send: a grant whose validity a long wait used up is given back (freshLease).
    return freshLease(
      make({
        resource: ask.name,
        owner,
        fence: BigInt(reply.fence),
        sentAt,
        ttlMs,
        operations: {
          extend: (extendMs) => call({ op: 'shared-extend', owner, ttlMs: extendMs }, 'extend'),
          release: () => call({ op: 'shared-release', owner }, 'release'),
        },
      }),
    );
  }
}

/** A blocking acquire's grant; the server never answers one with "not now", so null is a timeout. */
async function required<L>(grant: Promise<L | null>, name: string, waitMs: number): Promise<L> {
  const lease = await grant;
  if (lease === null) throw new LockTimeoutError(name, waitMs);
  return lease;
}
