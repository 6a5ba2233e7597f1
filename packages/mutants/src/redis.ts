import { LockNode, type ResourceKeys } from '@fencekit/redis/internal';
import { patchMethod } from './internals.js';
import { withValidity } from './lease-view.js';
import type { Mutant } from './mutant.js';

/**
 * Single-Redis mutants. `LockNode` (the scripts on one connection) is exported by @fencekit/redis/internal (not public API),
 * so these patch its prototype: every client in the process sends the mutated commands.
 */

/** The lock key's holder, read without the script (a mutant may be slow and racy; the point is the effect). */
function holderOf(node: LockNode, keys: ResourceKeys): Promise<string | null> {
  return node.redis.get(keys.lock);
}

export const redisReleaseAnyHolder: Mutant = {
  name: 'redis-release-any-holder',
  backend: 'redis',
  breaks: 'release deletes only its own grant: this release frees the lock whoever holds it (no owner check)',
  exposure: { workload: 'inventory', faults: ['pause-client'], fencing: true },
  checkers: ['lease', 'inventory'],
  async install() {
    patchMethod(
      LockNode.prototype,
      'releaseRaw',
      (original) =>
        async function (this: LockNode, keys: ResourceKeys, owner: string) {
          // The script compares the holder with `owner`: hand it the holder instead, and the check is gone.
          return original.call(this, keys, (await holderOf(this, keys)) ?? owner);
        },
      this.name,
    );
    return {};
  },
};

export const redisFenceAfterGrant: Mutant = {
  name: 'redis-fence-after-grant',
  backend: 'redis',
  breaks:
    'fences grow with grants: the fence INCR is a second command after the grant, so a holder stalled between the two gets a fence above a later holder’s',
  exposure: { workload: 'inventory', faults: ['pause-client', 'latency'], fencing: true },
  checkers: ['fences', 'inventory'],
  async install() {
    const fenceAfter = async (node: LockNode, keys: ResourceKeys) =>
      String(await node.redis.incr(keys.fence));
    patchMethod(
      LockNode.prototype,
      'tryAcquireRaw',
      (original) =>
        async function (this: LockNode, keys: ResourceKeys, owner: string, ttlMs: number, fenced: boolean) {
          if (!fenced) return original.call(this, keys, owner, ttlMs, fenced);
          const raw = await original.call(this, keys, owner, ttlMs, false);
          // 0 = granted unfenced: only now, in a round trip of its own, is the fence drawn.
          return raw === 0 ? fenceAfter(this, keys) : raw;
        },
      this.name,
    );
    patchMethod(
      LockNode.prototype,
      'attempt',
      (original) =>
        async function (this: LockNode, keys: ResourceKeys, request: Parameters<LockNode['attempt']>[1]) {
          if (!request.fenced) return original.call(this, keys, request);
          const reply = await original.call(this, keys, { ...request, fenced: false });
          if (!reply.granted || reply.fence !== null) return reply;
          return { granted: true as const, fence: await fenceAfter(this, keys) };
        },
      this.name,
    );
    return {};
  },
};

export const redisValidityFromAnswer: Mutant = {
  name: 'redis-validity-from-answer',
  backend: 'redis',
  breaks:
    'validity counts from the request’s send: here it counts from the answer, so time the request spent in flight (or the client stalled) is counted twice',
  exposure: { workload: 'inventory', faults: ['pause-client', 'latency'], fencing: true },
  checkers: ['lease'],
  async install() {
    return { wrapLocks: (locks) => withValidity(locks, ({ answeredAt, ttlMs }) => answeredAt + ttlMs) };
  },
};
