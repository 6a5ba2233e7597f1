import {
  type AcquireOptions,
  BackendUnavailableError,
  ClientClosedError,
  type Fence,
  freshLease,
  IndeterminateError,
  type LockCapabilities,
  type LockClient,
  LockLostError,
  LockTimeoutError,
  ManagedLease,
  monotonicNow,
  NotLockHolderError,
  normalizeAcquire,
  type TryAcquireOptions,
} from '@fencekit/core';
import { LineClient, RpcRemoteError, RpcTimeoutError } from '../rpc/line-socket.js';

/** Slack on top of `waitMs` before an unanswered acquire counts as indeterminate. */
export const ANSWER_SLACK_MS = 2_000;

/**
 * A `LockClient` in a client process whose lock table lives in the in-memory lock server process.
 * Validity is measured here, on the client's clock from when each request was sent, like any adapter.
 */
export class RemoteLockClient implements LockClient<Fence> {
  readonly backend = 'memory';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: false };
  readonly #connection: LineClient;
  #closed = false;

  private constructor(connection: LineClient) {
    this.#connection = connection;
  }

  static async connect(socketPath: string): Promise<RemoteLockClient> {
    try {
      return new RemoteLockClient(await LineClient.connect(socketPath));
    } catch (error) {
      throw new BackendUnavailableError('memory', `lock server at ${socketPath}`, { cause: error });
    }
  }

  async acquire(resource: string, options: AcquireOptions): Promise<ManagedLease<Fence>> {
    const o = normalizeAcquire(resource, options);
    const grant = await this.#request(o.resource, 'acquire', { ttlMs: o.ttlMs, waitMs: o.waitMs });
    if (grant === null) throw new LockTimeoutError(o.resource, o.waitMs);
    return grant;
  }

  tryAcquire(resource: string, options: TryAcquireOptions): Promise<ManagedLease<Fence> | null> {
    const o = normalizeAcquire(resource, { ttlMs: options.ttlMs, waitMs: 0 });
    return this.#request(o.resource, 'tryAcquire', { ttlMs: o.ttlMs, waitMs: 0 });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#connection.close();
  }

  async #request(
    resource: string,
    op: 'acquire' | 'tryAcquire',
    o: { ttlMs: number; waitMs: number },
  ): Promise<ManagedLease<Fence> | null> {
    if (this.#closed) throw new ClientClosedError('memory lock client');
    const sentAt = monotonicNow();
    let reply: { owner: string; fence: string } | null;
    try {
      reply = await this.#connection.call({ op, resource, ...o }, o.waitMs + ANSWER_SLACK_MS);
    } catch (error) {
      throw translate(error, resource, 'acquire', o.waitMs);
    }
    if (reply === null) return null;
    const owner = reply.owner;
    // Validity counts from the send, so a long wait in the server's queue can use all of it up: such a
    // grant is given back, never handed out (the contract; the lease checker's 'expired-grant').
    return freshLease(this.#lease(resource, owner, reply.fence, sentAt, o.ttlMs));
  }

  #lease(resource: string, owner: string, fence: string, sentAt: number, ttlMs: number): ManagedLease<Fence> {
    return new ManagedLease<Fence>({
      resource,
      owner,
      fence: BigInt(fence),
      sentAt,
      ttlMs,
      operations: {
        extend: async (ttlMs) => {
          try {
            await this.#connection.call({ op: 'extend', resource, owner, ttlMs }, ANSWER_SLACK_MS);
          } catch (error) {
            throw translate(error, resource, 'extend', 0, owner);
          }
        },
        release: async () => {
          try {
            await this.#connection.call({ op: 'release', resource, owner }, ANSWER_SLACK_MS);
          } catch (error) {
            throw translate(error, resource, 'release', 0, owner);
          }
        },
      },
    });
  }
}

export function translate(
  error: unknown,
  resource: string,
  operation: 'acquire' | 'extend' | 'release',
  waitMs: number,
  owner = '',
): Error {
  if (error instanceof RpcTimeoutError) return new IndeterminateError(resource, operation, { cause: error });
  if (error instanceof RpcRemoteError) {
    switch (error.code) {
      case 'timeout':
        return new LockTimeoutError(resource, waitMs, { cause: error });
      case 'lost':
        return new LockLostError(resource, error.message, { cause: error });
      case 'not-holder':
        return new NotLockHolderError(resource, owner, { cause: error });
    }
  }
  // The connection broke: a request in flight may have been applied.
  if (operation === 'acquire' && !(error instanceof RpcRemoteError)) {
    return new IndeterminateError(resource, operation, { cause: error });
  }
  return new BackendUnavailableError('memory', (error as Error).message, { cause: error });
}
