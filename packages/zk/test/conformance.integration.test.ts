/// <reference path="../src/node-zookeeper-client.d.ts" />
import { injectCluster } from '@fencekit/cluster/vitest';
import type { Leadership } from '@fencekit/core';
import { describeElectionConformance, describeLockConformance } from '@fencekit/core/testing';
import { ZkElection, ZkLeadership, ZkLockClient } from '@fencekit/zk';
import zookeeper, { type Client, type ClientOptions, type Stat } from 'node-zookeeper-client';
import { closeRaw, connectRaw, settle } from '../bench/raw.js';
import { followerLagMs } from './support/ensemble.js';

const { endpoints } = injectCluster('zookeeper');
const servers = endpoints.join(',');
/**
 * Short, so the suite's "holder went away" checks do not wait long, but twice the ensemble's follower
 * lag (2 s): a session's validity is its timeout less that lag, and a shorter one is refused.
 */
const sessionTimeoutMs = 4_000;

// Expiring a leader's session the way the ensemble does needs that session's id and password, and the
// adapter keeps its ZooKeeper client private. Every client node-zookeeper-client creates is recorded
// here (and otherwise left alone), so the one owning the leader's node can be found by session id.
const opened = new Set<Client>();
const createClient = zookeeper.createClient.bind(zookeeper);
zookeeper.createClient = (connection: string, options?: ClientOptions): Client => {
  const client = createClient(connection, options);
  opened.add(client);
  client.once('disconnected', () => {
    if (client.getState().name === 'CLOSED') opened.delete(client);
  });
  return client;
};

/**
 * Expires the session behind `leadership`: a second connection takes the session over (same id and
 * password, so the ensemble drops the first connection) and closes it, which ends the session and
 * deletes its ephemeral nodes; the adapter, reconnecting, is told the session expired. Resolves once
 * the leader's node is gone.
 */
async function expireLeaderSession(leadership: Leadership): Promise<void> {
  if (!(leadership instanceof ZkLeadership)) throw new Error('not a ZooKeeper leadership');
  const admin = await connectRaw(servers, 10_000);
  try {
    const exists = () => settle<Stat | null>((done) => admin.exists(leadership.node, undefined, done));
    const stat = await exists();
    if (!stat) throw new Error(`the leader's node ${leadership.node} is already gone`);
    const owner = [...opened].find((client) => client.getSessionId().equals(stat.ephemeralOwner));
    if (!owner) throw new Error(`no recorded client owns ${leadership.node}`);
    await takeOverAndClose(owner);
    const deadline = Date.now() + 10_000;
    while ((await exists()) !== null) {
      if (Date.now() > deadline) throw new Error(`${leadership.node} outlived its closed session`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await closeRaw(admin);
  }
}

async function takeOverAndClose(owner: Client): Promise<void> {
  const sessionPassword = (owner as Client & { getSessionPassword(): Buffer }).getSessionPassword();
  // The unrecorded factory: this client is the test's, not the adapter's.
  const takeover = createClient(servers, {
    sessionTimeout: sessionTimeoutMs,
    retries: 0,
    sessionId: owner.getSessionId(),
    sessionPassword,
  } as ClientOptions);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('could not take the session over within 10 s')), 10_000);
    takeover.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    takeover.connect();
  }).catch(async (error: unknown) => {
    await closeRaw(takeover);
    throw error;
  });
  await closeRaw(takeover);
}

describeLockConformance('zookeeper', {
  createClient: async () => new ZkLockClient({ servers, sessionTimeoutMs, followerLagMs }),
  // Fair: FIFO by sequence number. Expiry on: a lease not extended within ttlMs is given up by its
  // client, which deletes the lock node (a dead client's node goes with its session instead).
  capabilities: { fair: true, expiry: true },
  // Generous for a shared, loaded machine: the suite's short TTL and every wait scaled up.
  ttlMs: 1_000,
  timeScale: 3,
  resourcePrefix: 'zk-conformance',
});

describeElectionConformance('zookeeper', {
  createElection: async (name) => new ZkElection(name, { servers, sessionTimeoutMs, followerLagMs }),
  ttlMs: sessionTimeoutMs,
  timeScale: 3,
  loseSession: (_participant, leadership) => expireLeaderSession(leadership),
});
