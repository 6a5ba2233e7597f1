import type { LeaseOperations, ManagedLease } from '@fencekit/core';
import { LockLostError, NotLockHolderError } from '@fencekit/core';
import { classifyFailure } from './failures.js';
import type { ResourceKeys } from './keys.js';
import type { LockNode } from './node.js';

/**
 * What one lease of `RedisLockClient` does on the server. A class rather than a set of closures,
 * because one is built for every grant: a short critical section should pay as little as possible.
 */
export class RedisLeaseOperations implements LeaseOperations {
  /** Set right after the lease is built: a failed extension marks it lost. */
  lease: ManagedLease<bigint> | undefined;

  constructor(
    readonly backend: string,
    readonly node: LockNode,
    readonly resource: string,
    readonly keys: ResourceKeys,
    readonly owner: string,
  ) {}

  async extend(ttlMs: number): Promise<void> {
    let extended: boolean;
    try {
      extended = await this.node.extend(this.keys, this.owner, ttlMs);
    } catch (error) {
      const failure = classifyFailure(this.backend, this.resource, 'extend', error);
      // Unsure whether the lease still stands: the holder must stop now, not at expiry.
      this.lease?.markLost(`extension failed: ${failure.message}`, failure);
      throw failure;
    }
    if (!extended) throw new LockLostError(this.resource, 'the lock expired or another holder took it');
  }

  async release(): Promise<void> {
    let reply: number;
    try {
      reply = Number(await this.node.releaseRaw(this.keys, this.owner));
    } catch (error) {
      throw classifyFailure(this.backend, this.resource, 'release', error);
    }
    if (reply === -1) throw new NotLockHolderError(this.resource, this.owner);
  }
}
