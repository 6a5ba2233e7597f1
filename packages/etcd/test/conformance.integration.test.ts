import type { Election, Leadership } from '@fencekit/core';
import { describeElectionConformance, describeLockConformance } from '@fencekit/core/testing';
import { EtcdLeadership } from '@fencekit/etcd';
import { newClient } from './support/clients.js';

/**
 * What an operator (or etcd itself, at expiry) does to a session: revoke the lease the leader's key
 * is attached to, from another client. etcd deletes the key at once; the leader hears of it at its
 * next keep-alive.
 */
async function revokeLeaderLease(leadership: Leadership): Promise<void> {
  if (!(leadership instanceof EtcdLeadership)) throw new Error('not an etcd leadership');
  const admin = newClient();
  try {
    const { kvs } = await admin.etcd.kv.range({ key: Buffer.from(leadership.key, 'utf8') });
    const lease = kvs[0]?.lease;
    if (lease === undefined || lease === '0') throw new Error(`no lease behind ${leadership.key}`);
    await admin.etcd.leaseClient.leaseRevoke({ ID: lease });
  } finally {
    await admin.close();
  }
}

describeLockConformance('etcd (3 members)', {
  createClient: async () => newClient(),
  // Keys live as long as their session's keep-alive, not a per-lock TTL: an un-extended lease of a
  // live client does not expire, so the expiry checks do not apply (the fault tests cover expiry).
  capabilities: { fair: true, blocking: true, expiry: false, safeFences: true, cleanClose: true },
  ttlMs: 2_000,
  // A first acquire grants a session (one raft write) before it joins the queue; on a shared machine
  // that can exceed the suite's 100 ms spacing between "arrivals", so give the waits room.
  timeScale: 2,
});

describeLockConformance('etcd (3 members), keepAlive: false', {
  createClient: async () => newClient({ keepAlive: false }),
  // One etcd lease per grant, renewed only by extend(): the lease ends ttlMs after the last one, so
  // every check runs, the expiry ones included. 2 s is etcd's minimum lease TTL with default timeouts.
  capabilities: { fair: true, blocking: true, expiry: true, safeFences: true, cleanClose: true },
  ttlMs: 2_000,
  timeScale: 2,
});

describeElectionConformance('etcd (3 members)', {
  createElection: async (name) => {
    const client = newClient();
    let election: ReturnType<typeof client.election>;
    try {
      election = client.election(name, { ttlMs: 2_000 });
    } catch (error) {
      // A refused name (the hostile-names check) must not leave this participant's connection open.
      await client.close();
      throw error;
    }
    // Each participant owns its connection, like a separate server would.
    const participant: Election = {
      name: election.name,
      campaign: (candidate, options) => election.campaign(candidate, options),
      leader: (options) => election.leader(options),
      observe: (options) => election.observe(options),
      close: async () => {
        await election.close();
        await client.close();
      },
    };
    return participant;
  },
  ttlMs: 2_000,
  loseSession: (_participant, leadership) => revokeLeaderLease(leadership),
});
