import { ManagedLease, monotonicNow } from '@fencekit/core';
import { EtcdLease, Session } from '@fencekit/etcd';
import { patchMethod } from './internals.js';
import { type Mutant, MutantTargetError } from './mutant.js';

export const etcdKeepAliveNeverFails: Mutant = {
  name: 'etcd-keepalive-never-fails',
  backend: 'etcd',
  breaks:
    'a lease is valid only while its session is renewed: here the keep-alive reports every renewal as answered and never a loss, so a holder cut off from etcd keeps believing',
  exposure: { workload: 'mutex', faults: ['stall-holder'], fencing: true },
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
  exposure: { workload: 'mutex', faults: ['pause-client'], fencing: true, ttlMs: 1_000 },
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
