import { ManagedLease, monotonicNow } from '@fencekit/core';
import { type EtcdClient, EtcdLease, Session } from '@fencekit/etcd';
import { patchMethod } from './internals.js';
import { type Mutant, MutantTargetError } from './mutant.js';

export const etcdKeepAliveNeverFails: Mutant = {
  name: 'etcd-keepalive-never-fails',
  backend: 'etcd',
  breaks:
    'a lease is valid only while its session is renewed: here the keep-alive reports every renewal as answered and never a loss, so a holder cut off from etcd keeps believing',
  exposure: { workload: 'inventory', faults: ['stall-holder'], fencing: true },
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
  exposure: { workload: 'inventory', faults: ['stall-holder', 'isolate'], fencing: true },
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
