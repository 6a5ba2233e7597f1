import {
  assertEncodableKey,
  BackendUnavailableError,
  FencekitError,
  InvalidArgumentError,
  StaleFenceError,
} from '@fencekit/core';
import type { ZkLease } from './lock.js';
import type { ZkSession } from './session.js';
import { ZkCallError, ZkCode } from './zk-errors.js';

export interface GuardedWriteOptions {
  signal?: AbortSignal;
  /** Expected version of the target znode (compare-and-set); default any version. */
  version?: number;
}

/** ZooKeeper refused a guarded write: the lock node it was guarded by no longer exists. */
export class GuardedWriteRefusedError extends StaleFenceError {
  constructor(
    resource: string,
    fence: bigint,
    readonly lockNode: string,
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(resource, fence, undefined, options);
    this.message = `Guarded write to ${path} refused by ZooKeeper: lock node ${lockNode} (fence ${fence}) no longer exists`;
  }
}

/** ZooKeeper did not answer a guarded write: it may or may not have been applied. */
export class GuardedWriteIndeterminateError extends FencekitError {
  readonly code = 'indeterminate';
  constructor(
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(`Outcome of the guarded write to ${path} is unknown: it may have been applied`, options);
  }
}

/**
 * One `multi`: check that the lock node exists, then set the data. Lock node names carry a
 * random owner part, so "exists" means "this very grant is still in force"; ZooKeeper applies both
 * or neither, so a holder that lost the lock (session expired, released, deleted) cannot write.
 */
export async function guardedWrite(
  session: ZkSession,
  lease: ZkLease,
  path: string,
  data: Buffer,
  options: GuardedWriteOptions,
): Promise<void> {
  if (typeof path !== 'string' || !path.startsWith('/') || path.length < 2) {
    throw new InvalidArgumentError('path', path, 'an absolute znode path');
  }
  assertEncodableKey('path', path);
  if (!Buffer.isBuffer(data)) throw new InvalidArgumentError('data', data, 'a Buffer');
  const version = options.version ?? -1;
  try {
    await session.multi(
      `guarded write of ${path}`,
      (tx) => tx.check(lease.node, -1).setData(path, data, version),
      { signal: options.signal },
    );
  } catch (error) {
    if (!(error instanceof ZkCallError)) throw error;
    const failedOp = (error.cause as { failedOp?: number } | undefined)?.failedOp;
    if (error.code === ZkCode.NO_NODE && failedOp === 0) {
      const refused = new GuardedWriteRefusedError(lease.resource, lease.fence, lease.node, path, {
        cause: error,
      });
      lease.markLost(`ZooKeeper refused a guarded write: lock node ${lease.node} no longer exists`, refused);
      throw refused;
    }
    if (error.code === ZkCode.NO_NODE) {
      throw new InvalidArgumentError('path', path, 'an existing znode (create it before guarded writes)');
    }
    if (error.uncertain) throw new GuardedWriteIndeterminateError(path, { cause: error });
    throw new BackendUnavailableError('zookeeper', error.message, { cause: error });
  }
}
