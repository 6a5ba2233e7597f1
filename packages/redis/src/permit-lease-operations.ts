import type { LeaseOperations, ManagedLease } from '@fencekit/core';
import { LockLostError } from '@fencekit/core';
import { classifyFailure } from './failures.js';
import type { PermitKeys, PermitNode } from './permit-node.js';

/** What one semaphore or read-write lease of `RedisSharedLockClient` does on the server. */
export class PermitLeaseOperations implements LeaseOperations {
  /** Set right after the lease is built: a failed extension marks it lost. */
  lease: ManagedLease<bigint> | undefined;

  constructor(
    readonly backend: string,
    readonly node: PermitNode,
    readonly name: string,
    readonly keys: PermitKeys,
    readonly owner: string,
    readonly limit: number,
  ) {}

  async extend(ttlMs: number): Promise<void> {
    let extended: boolean;
    try {
      extended = await this.node.extend(this.keys, this.owner, ttlMs, this.limit);
    } catch (error) {
      const failure = classifyFailure(this.backend, this.name, 'extend', error);
      // Unsure whether the grant still stands: the holder must stop now, not at expiry.
      this.lease?.markLost(`extension failed: ${failure.message}`, failure);
      throw failure;
    }
    if (!extended) throw new LockLostError(this.name, 'the grant expired on the server');
  }

  /** A grant already gone (expired) resolves: there is no single other holder to name. */
  async release(): Promise<void> {
    try {
      // Three keys when nobody is known to wait; the full script when somebody does (or the fast one found a queue).
      await this.node.releaseFast(this.keys, this.owner, this.limit);
    } catch (error) {
      throw classifyFailure(this.backend, this.name, 'release', error);
    }
  }
}
