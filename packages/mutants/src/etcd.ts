import { ManagedLease, monotonicNow } from '@fencekit/core';
import { EtcdClient, EtcdLease, Session } from '@fencekit/etcd';
import { patchMethod } from './internals.js';
import { type Mutant, MutantTargetError } from './mutant.js';

export const etcdKeepAliveNeverFails: Mutant = {
  name: 'etcd-keepalive-never-fails',
  backend: 'etcd',
  breaks:
    'a lease is valid only while its session is renewed: here the keep-alive reports every renewal as answered and never a loss, so a holder cut off from etcd keeps believing',
  // The holder's process must keep running while it is cut off (a stall stops its clock too, and its first
  // reading after it sees the lapse before any fake renewal runs): cut-holder cuts its links past its session
  // until another client is granted; its reading after the heal still says held. 15 s: the slot (a wait for a
  // window, a cut of a session and more) fits before the recovery phase.
  exposure: { workload: 'inventory', faults: ['cut-holder'], fencing: true, timeMs: 15_000 },
  checkers: ['lease'],
  async install() {
    const validUntil = Object.getOwnPropertyDescriptor(Session.prototype, 'validUntil')?.get;
    if (validUntil === undefined) throw new Error(`mutant ${this.name}: Session.validUntil is not a getter`);
    // The session's validity as a keep-alive that always succeeds would see it: a TTL from now.
    Object.defineProperty(Session.prototype, 'validUntil', {
      configurable: true,
      get(this: Session) {
        return Math.max(validUntil.call(this), monotonicNow() + this.ttlMs - 1);
      },
    });
    // Losses are never reported to the leases...
    patchMethod(Session.prototype, 'onLost', () => () => () => undefined, this.name);
    // ...and renewals are reported on the keep-alive's schedule, answered or not.
    patchMethod(
      Session.prototype,
      'onRenew',
      (original) =>
        function (this: Session, listener: () => void) {
          const off = original.call(this, listener);
          const timer = setInterval(listener, Math.max(1, Math.floor(this.ttlMs / 3)));
          timer.unref();
          return () => {
            clearInterval(timer);
            return off();
          };
        },
      this.name,
    );
    return {};
  },
};

export const etcdExpiredGrantHandedOut: Mutant = {
  name: 'etcd-expired-grant-handed-out',
  backend: 'etcd',
  bug: '#13 bug 5: acquire can resolve with a lease already past validUntil',
  breaks:
    'a lease whose validity is gone on return is never handed out: here the client’s own check right after the grant always finds it held',
  exposure: { workload: 'mutex', faults: [], fencing: true, ttlMs: 50 },
  checkers: ['lease'],
  async install() {
    const held = Object.getOwnPropertyDescriptor(ManagedLease.prototype, 'held')?.get;
    if (held === undefined) throw new MutantTargetError(this.name, 'ManagedLease.held');
    // The client reads `held` once, right after building the lease, to decide whether to hand it
    // out: that first reading always says yes; every later one is the adapter's.
    const checked = new WeakSet<object>();
    Object.defineProperty(EtcdLease.prototype, 'held', {
      configurable: true,
      get(this: EtcdLease) {
        if (checked.has(this)) return held.call(this);
        checked.add(this);
        return true;
      },
    });
    return {};
  },
};

/** One range of a Txn as the etcd3 client sends it (only what this mutant reads). */
interface RangeRequest {
  request_range?: { key?: Buffer; range_end?: Buffer; keys_only?: boolean; max_create_revision?: string };
}
interface TxnRequest {
  compare?: unknown[];
  success?: RangeRequest[];
}
interface TxnResponse {
  responses: { response_range?: { kvs: { key: Buffer; create_revision: string }[] } }[];
}

/**
 * The adapter's position read after a wake-up: one Txn of [my key (keys only), the newest key created
 * before mine]. The first range is mine exactly when the second is bounded by my revision − 1.
 */
function positionRead(request: TxnRequest): { key: Buffer; revision: string } | undefined {
  const [mine, ahead] = request.success ?? [];
  const key = mine?.request_range?.key;
  const before = ahead?.request_range?.max_create_revision;
  if ((request.compare?.length ?? 0) !== 0 || request.success?.length !== 2) return undefined;
  if (key === undefined || mine?.request_range?.range_end !== undefined || before === undefined)
    return undefined;
  return { key, revision: (BigInt(before) + 1n).toString() };
}

export const etcdNoRecheckAfterGrant: Mutant = {
  name: 'etcd-no-recheck-after-grant',
  backend: 'etcd',
  breaks:
    'a waiter woken at the head checks, in the same read, that its own key still exists (Jepsen’s etcd 3.4.3 finding): here a vanished key reads as present, so a waiter whose key is gone takes the lock beside the true head',
  // A waiter's key deleted behind its live session (Jepsen's etcd 3.4.3 finding): the mutant's waiter
  // takes the lock at the head's release beside the waiter that was behind it.
  exposure: { workload: 'inventory', faults: ['delete-waiter-key'], fencing: true },
  checkers: ['lease'],
  async install() {
    return {
      wrapLocks(locks) {
        const kv = (locks as unknown as Partial<EtcdClient>).etcd?.kv as
          | { txn(request: TxnRequest, ...rest: unknown[]): Promise<TxnResponse> }
          | undefined;
        if (kv === undefined)
          throw new MutantTargetError('etcd-no-recheck-after-grant', 'EtcdClient.etcd.kv');
        const txn = kv.txn.bind(kv);
        kv.txn = async (request, ...rest) => {
          const response = await txn(request, ...rest);
          const read = positionRead(request);
          const range = response.responses[0]?.response_range;
          // My key is gone: answer as if it were still there, created at my revision.
          if (read !== undefined && range !== undefined && range.kvs.length === 0) {
            range.kvs.push({ key: read.key, create_revision: read.revision });
          }
          return response;
        };
        return locks;
      },
    };
  },
};

/** A lock key's delete as the adapter sends it: compare the key's create revision, then delete it. */
function deletedKey(request: TxnRequest & { success?: { request_delete_range?: { key?: Buffer } }[] }) {
  const key = request.success?.[0]?.request_delete_range?.key;
  return request.compare?.length === 1 && request.success?.length === 1 ? key?.toString('utf8') : undefined;
}

export const etcdEndedLeaseKeepsKey: Mutant = {
  name: 'etcd-ended-lease-keeps-key',
  backend: 'etcd',
  bug: '#13 bug 1: an ended lease can leave its key alive, so waiters starve',
  breaks:
    'whenever a lease ends without a confirmed delete its key is withdrawn: here only the holder’s first release try deletes it, so a release lost in an outage (or a lapsed lease) leaves the key on the live session',
  // reset-holder fails the holder's write and release at once (its links reset from its window until the
  // release has failed), and the outage ends well within its session, which lives on: the key the failed
  // release left must be withdrawn by the client. The holder stays out of the contest for three sessions
  // (workloads/sections.ts, 6 s), so a key left behind starves the others past the liveness bound (3 s at
  // this TTL, counted from a TTL after the heal). (Under flicker the release rode the killed member's
  // outage out on a 3-node cluster: nothing was left.) TTL 1.5 s: the client counts its session from the
  // last renewal, and 1 s left too little room for a stop, the outage and a reconnect on a loaded machine
  // (the session lapsed, its revoke deleted the key). 15 s: the slot fits before the recovery phase.
  exposure: { workload: 'inventory', faults: ['reset-holder'], fencing: true, timeMs: 15_000, ttlMs: 1_500 },
  checkers: ['liveness'],
  async install() {
    /** Keys of leases handed out; the holder's first release try is the only delete they get. */
    const granted = new Set<string>();
    const firstTry = new Set<string>();
    for (const method of ['acquire', 'tryAcquire'] as const) {
      patchMethod(
        EtcdClient.prototype,
        method,
        (original) =>
          async function (this: EtcdClient, ...args: [string, never]) {
            const lease = await (original as (...a: typeof args) => Promise<EtcdLease | null>).apply(
              this,
              args,
            );
            if (lease) granted.add(lease.key);
            return lease;
          },
        this.name,
      );
    }
    const release = ManagedLease.prototype.release;
    Object.defineProperty(EtcdLease.prototype, 'release', {
      configurable: true,
      writable: true,
      value(this: EtcdLease) {
        if (granted.has(this.key)) firstTry.add(this.key);
        return release.call(this);
      },
    });
    return {
      wrapLocks(locks) {
        const kv = (locks as unknown as Partial<EtcdClient>).etcd?.kv as
          | { txn(request: TxnRequest, ...rest: unknown[]): Promise<unknown> }
          | undefined;
        if (kv === undefined) throw new MutantTargetError('etcd-ended-lease-keeps-key', 'EtcdClient.etcd.kv');
        const txn = kv.txn.bind(kv);
        kv.txn = async (request, ...rest) => {
          const key = deletedKey(request);
          if (key === undefined || !granted.has(key)) return txn(request, ...rest);
          if (firstTry.delete(key)) return txn(request, ...rest);
          // A retry, or a withdrawal of a lease its holder never released: answered as done, never sent.
          return { succeeded: true, responses: [], header: {} };
        };
        return locks;
      },
    };
  },
};
