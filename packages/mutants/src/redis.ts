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

/**
 * The fence drawn apart from the grant, *before* it: `INCR` in a round trip of its own, the grant
 * (`SET NX PX`) after it, unfenced, and the fence kept for the resource until a grant comes (the
 * attempts of one acquire, and a later acquire if this one failed, share it). A client that waits or
 * stalls between the two holds, once granted, a fence below that of every client granted meanwhile.
 *
 * It replaces `redis-fence-after-grant` (INCR sent *after* the grant), which is equivalent to the
 * adapter for every careful user (argued in the harness README, "Mutation score"): a lease is handed
 * out only while its validity, counted from the grant's send, lasts, so its late INCR always lands
 * before the key can expire and the next grant draw its own.
 */
export const redisFenceBeforeGrant: Mutant = {
  name: 'redis-fence-before-grant',
  backend: 'redis',
  breaks:
    'fences grow with grants: here the fence is drawn (INCR) in a round trip of its own before the grant and kept until one comes, so a client that waited or stalled in between is granted a fence below an earlier holder’s',
  // A client stopped while its acquire is outstanding (its INCR in flight) for longer than the TTL, until
  // another client is granted; fencing off, so the resource accepts the lower fence and the fences check
  // sees it (with fencing on the resource would refuse the rightful holder's writes instead).
  exposure: { workload: 'mutex', faults: ['stall-acquire'], fencing: false },
  checkers: ['fences'],
  async install() {
    /** Per fence key: the fence this process drew and has not yet been granted with. */
    const reserved = new Map<string, string>();
    const reserve = async (node: LockNode, keys: ResourceKeys): Promise<void> => {
      if (!reserved.has(keys.fence)) reserved.set(keys.fence, String(await node.redis.incr(keys.fence)));
    };
    const take = (keys: ResourceKeys): string => {
      const fence = reserved.get(keys.fence) as string;
      reserved.delete(keys.fence);
      return fence;
    };
    patchMethod(
      LockNode.prototype,
      'tryAcquireRaw',
      (original) =>
        async function (this: LockNode, keys: ResourceKeys, owner: string, ttlMs: number, fenced: boolean) {
          if (!fenced) return original.call(this, keys, owner, ttlMs, fenced);
          await reserve(this, keys);
          const raw = await original.call(this, keys, owner, ttlMs, false);
          // 0 = granted unfenced: the grant carries the fence drawn before it.
          return raw === 0 ? take(keys) : raw;
        },
      this.name,
    );
    patchMethod(
      LockNode.prototype,
      'attempt',
      (original) =>
        async function (this: LockNode, keys: ResourceKeys, request: Parameters<LockNode['attempt']>[1]) {
          if (!request.fenced) return original.call(this, keys, request);
          await reserve(this, keys);
          const reply = await original.call(this, keys, { ...request, fenced: false });
          if (!reply.granted) return reply;
          return { granted: true as const, fence: take(keys) };
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
  // Validity counted from the answer overstates it by the answer's own trip (and any stop between its
  // arrival and its reading). As a second holder's overlap it hardly ever shows (a symmetric latency
  // cancels out, a long stop makes the adapter give the grant back: 0 of 5 seeds on 2026-12-03), so the
  // lease check judges the claim itself: each grant records its TTL and when its request was sent
  // (harness `client/send-clock.ts`), and a `validUntil` past that send + TTL is `validity-past-send`.
  // Every grant's answer takes some trip; `latency` (a quarter TTL each way) makes it tens of ms.
  exposure: { workload: 'inventory', faults: ['latency'], fencing: true },
  checkers: ['lease'],
  async install() {
    return { wrapLocks: (locks) => withValidity(locks, ({ answeredAt, ttlMs }) => answeredAt + ttlMs) };
  },
};
