// The ensemble may grant a shorter session timeout than asked (it clamps to its maxSessionTimeout,
// 60 s on the test ensembles). A grant that leaves a lease no validity after the follower lag must be
// refused with the same typed error as a bad option, not leave a client whose every lease is void.
import { injectCluster } from '@fencekit/cluster/vitest';
import { InvalidArgumentError } from '@fencekit/core';
import { ZkLockClient } from '@fencekit/zk';
import { expect, it } from 'vitest';

const { endpoints } = injectCluster('zookeeper');

it('a negotiated session timeout that leaves no validity is refused, and the client stays closed', async () => {
  // Asked: 80 s, which leaves validity after a 60 s lag; granted: 60 s, which does not.
  const client = new ZkLockClient({
    servers: endpoints.join(','),
    sessionTimeoutMs: 80_000,
    followerLagMs: 60_000,
  });
  try {
    const refused = await client
      .acquire('negotiated/refused', { ttlMs: 5_000, waitMs: 5_000 })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as InvalidArgumentError).argument).toBe('negotiated session timeout');
    expect(client.session.closed).toBe(true);
    // Later calls fail the same way at once, without connecting again.
    expect(await client.session.ready().catch((e: unknown) => e)).toBe(refused);
  } finally {
    await client.close();
  }
}, 30_000);
