import { type ZkLease, ZkLockClient, type ZkSession } from '@fencekit/zk';
import { adapterModule, patchMethod } from './internals.js';
import type { Mutant } from './mutant.js';

/** What these mutants touch of the zk recipes' internal queue (queue.js, paths.js: not exported). */
interface Entry {
  folder: string;
  name: string;
  czxid: bigint | undefined;
}
interface Cancel {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
type AwaitHead = (
  entry: Entry,
  joined: { entry: Entry; order: string[] },
  signal: Cancel,
) => Promise<{ czxid: bigint }>;
type Withdraw = (entry: Entry, stop?: AbortSignal) => Promise<boolean>;
interface QueueModule {
  SequentialQueue: {
    prototype: { awaitHead: AwaitHead; withdraw: Withdraw; leave(entry: Entry): Promise<boolean> };
  };
}
interface PathsModule {
  queueOrder(children: readonly string[]): string[];
}

/** Resolves at the next change of `folder`'s children (a watch on the whole folder: the herd). */
function nextChange(session: ZkSession, folder: string, signal: Cancel): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort);
    const done = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    session.children(folder, done).catch((error: unknown) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
  });
}

export const zkWatchAllChildren: Mutant = {
  name: 'zk-watch-all-children',
  backend: 'zk',
  breaks:
    'a waiter is granted only once every entry ahead of it is gone: here it watches the whole folder and takes the lock at the first deletion of anyone',
  exposure: { workload: 'mutex', faults: [], fencing: false },
  checkers: ['mutex', 'lease'],
  async install() {
    const { SequentialQueue } = await adapterModule<QueueModule>('@fencekit/zk', 'queue.js');
    const { queueOrder } = await adapterModule<PathsModule>('@fencekit/zk', 'paths.js');
    patchMethod(
      SequentialQueue.prototype,
      'awaitHead',
      (original) =>
        async function (this: { session: ZkSession }, entry, joined, signal) {
          const listing = async () => queueOrder((await this.session.children(entry.folder)).children);
          const order = joined.order.length > 0 ? joined.order : await listing();
          // At the head already, or without the fence at hand: the adapter's own path.
          if (order[0] === entry.name || entry.czxid === undefined) {
            return original.call(this, entry, { entry, order }, signal);
          }
          let before = order.length;
          for (;;) {
            await nextChange(this.session, entry.folder, signal);
            const now = (await listing()).length;
            if (now < before) return { czxid: entry.czxid };
            before = now;
          }
        },
      this.name,
    );
    return {};
  },
};

export const zkReclaimLeavesOldLeaseArmed: Mutant = {
  name: 'zk-reclaim-old-lease-armed',
  backend: 'zk',
  bug: '#13 bug 3: releasing the old lease after reclaim() deletes the node the reclaimed lease holds',
  breaks:
    'once reclaimed, the old lease cannot touch the lock node: here its release deletes it under the new lease',
  exposure: { workload: 'inventory', faults: ['suspend'], fencing: true },
  checkers: ['lease'],
  async install() {
    patchMethod(
      ZkLockClient.prototype,
      'reclaim',
      (original) =>
        async function (this: ZkLockClient, lease: ZkLease, options: Parameters<ZkLockClient['reclaim']>[1]) {
          const reclaimed = await original.call(this, lease, options);
          // The pre-fix old lease: still able to give the node up, which now is the reclaimed lease's.
          const session = this.session;
          Object.defineProperty(lease, 'release', {
            value: async () => {
              await session.remove(reclaimed.node);
            },
          });
          return reclaimed;
        },
      this.name,
    );
    return {};
  },
};

/** The session bound leases are capped by, where the adapter has it (the fix of #13 bug 2). */
interface SessionBound {
  aliveUntil?(generation: number): number;
}

export const zkValidityUncapped: Mutant = {
  name: 'zk-validity-uncapped',
  backend: 'zk',
  bug: '#13 bug 2: a lease’s validity is not bounded by the session timeout',
  breaks:
    'validUntil never exceeds the last answered send plus the session timeout: here the session vouches forever, so a holder stalled past its session still believes until its own TTL runs out',
  // A lock TTL longer than the session: only the session's bound keeps a stalled holder's validity
  // short of the next grant, which comes a session (4 s) and a tick after the stall (with TTL ≤
  // session, the TTL alone ends it first). 50 s fit a whole stall-holder slot (up to 3 TTLs of waiting
  // for a holder, then the stall) before the recovery phase a 6 s TTL needs (settle + liveness bound).
  exposure: {
    workload: 'inventory',
    faults: ['stall-holder'],
    fencing: true,
    ttlMs: 6_000,
    sessionMs: 4_000,
    timeMs: 50_000,
  },
  checkers: ['lease'],
  async install() {
    const { ZkSession } = await import('@fencekit/zk');
    const proto = ZkSession.prototype as SessionBound;
    // Before the fix the adapter had no such bound: there, the unmutated adapter is this mutant.
    if (typeof proto.aliveUntil === 'function') {
      patchMethod(
        proto as Required<SessionBound>,
        'aliveUntil',
        () => () => Number.POSITIVE_INFINITY,
        this.name,
      );
    }
    return {};
  },
};

export const zkWithdrawGivesUp: Mutant = {
  name: 'zk-withdraw-gives-up',
  backend: 'zk',
  breaks:
    'a lock or candidate node given up (failed release or resign, lease past its window, a waiter that stopped waiting) is deleted once the ensemble answers again: here its delete gives up after one session timeout or when the client opens a new session, leaving the node to the servers’ expiry of a session the client no longer uses',
  // quorum-loss kills a majority as a release goes out and keeps them down until every client has
  // treated its session as expired and opened a new one (two sessions); the servers, with no leader
  // meanwhile, keep the old sessions and expire them only a session timeout after they are back. The
  // nodes left behind hold every waiter that long: 8 s against the liveness allowance of 4.5 s (the
  // settle of a TTL, then the 3 s bound at TTL 1.5 s); a run that ends sooner still leaves the recovery
  // phase after the final heal (settle + bound + 1 s) to count. 34 s: the slot (a wait of up to 3 TTLs,
  // the outage of 16.5 s, two JVM restarts) fits before the recovery phase.
  exposure: {
    workload: 'inventory',
    faults: ['quorum-loss'],
    fencing: true,
    ttlMs: 1_500,
    sessionMs: 8_000,
    timeMs: 34_000,
  },
  checkers: ['liveness'],
  async install() {
    const { SequentialQueue } = await adapterModule<QueueModule>('@fencekit/zk', 'queue.js');
    // The delete as it was before the fix: `leave`, retried for one session timeout and only while
    // the entry's own session is the current one.
    patchMethod(
      SequentialQueue.prototype,
      'withdraw',
      () =>
        function (this: QueueModule['SequentialQueue']['prototype'], entry) {
          return this.leave(entry);
        },
      this.name,
    );
    return {};
  },
};

/** What the queue's late withdrawal needs of the owning client's background work (background.js). */
interface Background {
  readonly signal: AbortSignal;
  start(work: Promise<unknown>, onError: (error: unknown) => void): void;
}

/** Background work already stopped that runs nothing: a late withdrawal ends at once, deleting nothing. */
const NO_BACKGROUND: Background = {
  signal: AbortSignal.abort(new Error('zk-create-bound-to-signal: no background withdrawal')),
  start(work) {
    work.catch(() => {});
  },
};

export const zkCreateBoundToSignal: Mutant = {
  name: 'zk-create-bound-to-signal',
  backend: 'zk',
  // Not an issue #13 bug (`bug` is for those): the one fixed in 4647925, found by review.
  breaks:
    'an acquire given up (signal or waitMs) while its node’s create is in flight leaves no node behind: here nothing withdraws it, and it heads the queue until the client closes',
  // A quarter of the acquires cancelled after 0–8 ms or with a waitMs of 1–4 ms: on loopback a create
  // answers in about a millisecond, so some cancels land while it is in flight within seconds.
  exposure: { workload: 'mutex', faults: [], fencing: true, abortRate: 0.25 },
  checkers: ['liveness'],
  async install() {
    const { SequentialQueue } = await adapterModule<QueueModule>('@fencekit/zk', 'queue.js');
    // The join as it was before the fix: a create its caller gave up is withdrawn by nobody. The fix
    // hands the queue the client's background work for that; this queue's is one that runs nothing.
    patchMethod(
      SequentialQueue.prototype as QueueModule['SequentialQueue']['prototype'] & { join: Join },
      'join',
      (original) =>
        function (this: { background?: Background }, ...args: Parameters<Join>) {
          // Before the fix the queue had no background work: there, the unmutated adapter is this mutant.
          if (this.background !== undefined && this.background !== NO_BACKGROUND) {
            Object.defineProperty(this, 'background', { value: NO_BACKGROUND, configurable: true });
          }
          return original.apply(this, args);
        },
      this.name,
    );
    // A create its caller gave up is awaited by no one now; its failure (at close) must not be an
    // unhandled rejection that kills the client. The promise handed back is the same one.
    const { ZkSession } = await import('@fencekit/zk');
    patchMethod(
      ZkSession.prototype,
      'createWithStat',
      (original) =>
        function (this: ZkSession, ...args: Parameters<ZkSession['createWithStat']>) {
          const created = original.apply(this, args);
          created.catch(() => {});
          return created;
        },
      this.name,
    );
    return {};
  },
};

type Join = (folder: string, data: Buffer | null, signal: Cancel) => Promise<unknown>;
