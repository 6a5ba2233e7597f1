// On a shared session, closing a client does not end the session, so the ephemeral nodes of its
// aborted waits stay until they are deleted: close() must not resolve before those deletes have run
// (an aborted acquire or campaign starts its delete a few promise turns after close() aborts it).
import { injectCluster } from '@fencekit/cluster/vitest';
import { createSession, ZkElectionClient, ZkLockClient } from '@fencekit/zk';
import { expect, it } from 'vitest';
import { followerLagMs } from './support/ensemble.js';

const { endpoints } = injectCluster('zookeeper');
const options = { servers: endpoints.join(','), sessionTimeoutMs: 4_000, followerLagMs };

it('close() on a shared session resolves only once the nodes of its aborted waits are deleted', async () => {
  const holder = new ZkLockClient(options);
  const session = createSession(options);
  const tag = Math.random().toString(36).slice(2);
  try {
    const name = `shared-close-${tag}`;
    const resource = `shared-close/${tag}`;
    const leading = holder.session;
    const leader = await new ZkElectionClient({ session: leading })
      .election(name, { ttlMs: 4_000 })
      .campaign('a');
    const lease = await holder.acquire(resource, { ttlMs: 60_000 });
    const locks = new ZkLockClient({ session });
    const elections = new ZkElectionClient({ session });
    const waiting = [
      locks.acquire(resource, { ttlMs: 60_000, waitMs: 30_000 }).catch(() => {}),
      elections
        .election(name, { ttlMs: 4_000 })
        .campaign('b', { waitMs: 30_000 })
        .catch(() => {}),
    ];
    const lockFolder = holder.folderOf(resource);
    const electionFolder = `/fencekit/elections/${name}`;
    const queued = async () =>
      (await leading.children(lockFolder)).children.length +
      (await leading.children(electionFolder)).children.length;
    for (let i = 0; i < 100 && (await queued()) < 4; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await queued()).toBe(4);

    await Promise.all([elections.close(), locks.close()]);
    // Only the holder's and the leader's nodes are left: the waiters' went before close() resolved.
    expect(await queued()).toBe(2);
    await Promise.all(waiting);
    await lease.release();
    await leader.resign();
  } finally {
    await session.close();
    await holder.close();
  }
}, 30_000);
