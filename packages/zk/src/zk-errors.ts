/** ZooKeeper result codes fencekit reacts to (a subset of KeeperException.Code). */
export const ZkCode = {
  CONNECTION_LOSS: -4,
  OPERATION_TIMEOUT: -7,
  NO_NODE: -101,
  BAD_VERSION: -103,
  NODE_EXISTS: -110,
  SESSION_EXPIRED: -112,
  AUTH_FAILED: -115,
} as const;

/**
 * One ZooKeeper call that failed. `code` is ZooKeeper's result code; a call that got no answer in
 * time carries OPERATION_TIMEOUT, which like CONNECTION_LOSS means "may or may not have happened".
 */
export class ZkCallError extends Error {
  constructor(
    readonly operation: string,
    readonly path: string,
    readonly code: number,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`ZooKeeper ${operation} ${path} failed: ${detail} (code ${code})`, options);
  }

  override get name(): string {
    return 'ZkCallError';
  }

  /** The request may have been applied: the reply was lost or never came. */
  get uncertain(): boolean {
    return this.code === ZkCode.CONNECTION_LOSS || this.code === ZkCode.OPERATION_TIMEOUT;
  }
}

export function zkCode(error: unknown): number | undefined {
  return error instanceof ZkCallError ? error.code : undefined;
}

export function isUncertain(error: unknown): boolean {
  return error instanceof ZkCallError && error.uncertain;
}
