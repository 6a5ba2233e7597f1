export { EtcdClient, type EtcdClientOptions } from './client.js';
export type { EtcdConnectionOptions } from './connection.js';
export { EtcdElection, type EtcdLeaderInfo, EtcdLeadership } from './election.js';
export { guardedPut, ownershipCompare } from './guard.js';
export { EtcdLease } from './lease.js';
export { Session, type SessionOptions } from './session.js';
