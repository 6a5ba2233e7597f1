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
  // Two holders need two disjoint "quorums": requests to a minority of the nodes are delayed and
  // jittered, so the holder wins the fast majority while its requests to the minority are still on their
  // way, and a later client's requests can overtake them and win the N/2 slow nodes. The clients poll
  // (the fault has them do so, as node-redlock does), so many such late requests race. A majority quorum
  // gives the minority back. (Under `latency` on one node with ten queued clients the nodes' queues had
  // to disagree by chance: convicted only sometimes. Under `clock-jump-minority` the unmutated adapter is
  // convicted too: a holder with a bare majority that overlaps the jumped minority loses its quorum.)
  exposure: { workload: 'mutex', faults: ['latency-minority'], fencing: false },
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
  // A majority of the servers 0.8 % fast (inside the 1 % + 2 ms allowance) and a holder granted under
  // it stalled: the fast majority frees the lock TTL × (1 − 1/1.008) = 79 ms before the TTL, counted
  // from the send, runs out; the unmutated lease ended 102 ms before it, this one is still believed when
  // the next client (polling, as the fault has the clients do) is granted. A 10 s TTL makes that window
  // wider than a loaded machine's scheduling delays; 80 s runs always fit the aimed slot (15-30 s wait,
  // stalls of 10 s) before the recovery phase.
  exposure: { workload: 'mutex', faults: ['drift-majority'], fencing: false, ttlMs: 10_000, timeMs: 80_000 },
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
