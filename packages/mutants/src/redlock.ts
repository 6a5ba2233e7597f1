import type { LockNode } from '@fencekit/redis/internal';
import { WakeSubscriber } from '@fencekit/redis/internal';
import { RedlockClient } from '@fencekit/redlock';
import { adapterModule, patchMethod } from './internals.js';
import { withValidity } from './lease-view.js';
import type { Mutant } from './mutant.js';

/** The ioredis connection type, as the adapter names it. */
type Redis = LockNode['redis'];

/** What these mutants touch of Redlock's internal `Quorum` (quorum.js, not exported). */
interface QuorumInternals {
  size: number;
  settings: { nodes: readonly unknown[]; drift: (ttlMs: number) => number };
}
interface QuorumModule {
  Quorum: { prototype: Record<'round' | 'extend' | 'release' | 'giveBack', (...args: never[]) => unknown> };
}

/** Runs `before(this)` ahead of each of `methods` of Redlock's Quorum: instances are built by the client. */
async function beforeQuorumCalls(mutant: string, before: (quorum: QuorumInternals) => void): Promise<void> {
  const { Quorum } = await adapterModule<QuorumModule>('@fencekit/redlock', 'quorum.js');
  for (const method of ['round', 'extend', 'release', 'giveBack'] as const) {
    patchMethod(
      Quorum.prototype,
      method,
      (original) =>
        function (this: QuorumInternals, ...args: never[]) {
          before(this);
          return original.apply(this, args);
        },
      mutant,
    );
  }
}

export const redlockHalfQuorum: Mutant = {
  name: 'redlock-half-quorum',
  backend: 'redlock',
  breaks:
    'a grant needs a majority (⌊N/2⌋+1): here N/2 nodes suffice, so two clients can win disjoint halves at once',
  // Two holders need the nodes' queues to hand the lock to different waiters: many contending
  // clients, with one node's answers delayed and jittered so arrival orders differ between nodes.
  exposure: { workload: 'mutex', faults: ['latency'], fencing: false, clients: 10 },
  checkers: ['mutex', 'lease'],
  async install() {
    const half = (nodes: number) => Math.max(1, Math.floor(nodes / 2));
    await beforeQuorumCalls(this.name, (quorum) => {
      quorum.size = half(quorum.settings.nodes.length);
    });
    // The client copies the quorum size for its wake-up counting: lower that copy as well.
    for (const method of ['acquire', 'tryAcquire'] as const) {
      patchMethod(
        RedlockClient.prototype,
        method,
        (original) =>
          function (this: RedlockClient, ...args: Parameters<RedlockClient[typeof method]>) {
            (this as { quorum: number }).quorum = half(this.nodeNames.length);
            return (original as (...a: typeof args) => ReturnType<RedlockClient[typeof method]>).apply(
              this,
              args,
            );
          },
        this.name,
      );
    }
    return {};
  },
};

/** Redlock's default drift allowance (1 % of the TTL + 2 ms), which the harness does not change. */
const defaultDrift = (ttlMs: number) => ttlMs * 0.01 + 2;

export const redlockNoDrift: Mutant = {
  name: 'redlock-no-drift',
  backend: 'redlock',
  breaks:
    'validity subtracts the clock drift allowance: here it does not, so a lease outlives its keys on a fast-clocked node',
  exposure: { workload: 'mutex', faults: ['clock-drift'], fencing: false },
  checkers: ['lease'],
  async install() {
    await beforeQuorumCalls(this.name, (quorum) => {
      quorum.settings.drift = () => 0;
    });
    // The lease subtracts the client's own copy of the drift: add it back.
    return {
      wrapLocks: (locks) => withValidity(locks, ({ lease, ttlMs }) => lease.validUntil + defaultDrift(ttlMs)),
    };
  },
};

export const redlockCloseUnbounded: Mutant = {
  name: 'redlock-close-unbounded',
  backend: 'redlock',
  bug: '#13 bug 4: Redlock close() never returns while one node hangs',
  breaks:
    'close() is bounded whatever the servers do: here the wake-up subscriber’s QUIT is awaited without a bound',
  exposure: { workload: 'mutex', faults: ['hang-at-close'], fencing: false },
  checkers: ['bounds'],
  async install() {
    // The subscriber connection is private: remember it as it is opened, through the public `connect`.
    const opened = new WeakMap<WakeSubscriber, Redis>();
    patchMethod(
      WakeSubscriber.prototype,
      'ready',
      (original) =>
        function (this: WakeSubscriber) {
          if (!opened.has(this)) {
            const connect = this.connect;
            Object.defineProperty(this, 'connect', {
              value: () => {
                const redis = connect();
                opened.set(this, redis);
                return redis;
              },
            });
          }
          return original.call(this);
        },
      this.name,
    );
    patchMethod(
      WakeSubscriber.prototype,
      'close',
      (original) =>
        async function (this: WakeSubscriber) {
          const redis = opened.get(this);
          // The pre-fix close: QUIT and wait for its answer, which a stopped server never sends.
          if (redis !== undefined && redis.status === 'ready') await redis.quit().catch(() => undefined);
          return original.call(this);
        },
      this.name,
    );
    return {};
  },
};
