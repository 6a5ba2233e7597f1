import { describeReadWriteLockConformance, describeSemaphoreConformance } from '@fencekit/core/testing';
import { EtcdSharedLockClient } from '@fencekit/etcd';
import { runPrefix, sharedHosts } from './support/clients.js';

const kept = async () => new EtcdSharedLockClient({ hosts: sharedHosts(), prefix: runPrefix });
const perGrant = async () =>
  new EtcdSharedLockClient({ hosts: sharedHosts(), prefix: runPrefix, keepAlive: false });

// As the mutex's runs: with sessions kept alive an un-extended lease of a live client does not expire,
// so the expiry checks need `keepAlive: false` (one etcd lease per grant, renewed only by extend()).
// 2 s is etcd's minimum lease TTL with default timeouts.
const keptAliveRun = { createClient: kept, capabilities: { expiry: false }, ttlMs: 2_000, timeScale: 2 };
const perGrantRun = { createClient: perGrant, ttlMs: 2_000, timeScale: 2 };

describeSemaphoreConformance('etcd (3 members)', keptAliveRun);
describeReadWriteLockConformance('etcd (3 members)', keptAliveRun);
describeSemaphoreConformance('etcd (3 members), keepAlive: false', perGrantRun);
describeReadWriteLockConformance('etcd (3 members), keepAlive: false', perGrantRun);
