import { randomUUID } from 'node:crypto';
import { injectCluster } from '@fencekit/cluster/vitest';
import { InvalidArgumentError } from '@fencekit/core';
import { ZkSharedLockClient } from '@fencekit/zk';
import zookeeper from 'node-zookeeper-client';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRaw, connectRaw, settle } from '../bench/raw.js';
import { segmentFor } from '../src/paths.js';
import { followerLagMs } from './support/ensemble.js';

// A client that names a semaphore with another permit count is refused; the clients queued ahead of its
// entry are not its victims (review of #19: a waiter woken by a release read the whole folder, met the
// stranger's entry behind it and failed with InvalidArgumentError, losing its place).
const { endpoints } = injectCluster('zookeeper');
const servers = endpoints.join(',');

const clients: ZkSharedLockClient[] = [];
function client(): ZkSharedLockClient {
  const c = new ZkSharedLockClient({ servers, sessionTimeoutMs: 4_000, followerLagMs });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

describe('ZkSharedLockClient semaphore with a client of another permit count queued behind', () => {
  it('grants the waiter ahead of it; only the stranger is refused', async () => {
    const name = `mixed-${randomUUID()}`;
    const holder = await client().semaphore(name, { permits: 4 }).acquire({ ttlMs: 30_000, permits: 4 });
    const waiting = client()
      .semaphore(name, { permits: 4 })
      .acquire({ ttlMs: 30_000, waitMs: 10_000 })
      .then(
        (lease) => ({ lease }),
        (error: unknown) => ({ error }),
      );
    const admin = await connectRaw(servers, 10_000);
    try {
      const folder = `/fencekit/semaphores/${segmentFor(name)}/slots`;
      // Wait for the waiter's entry, then put one named as a `permits: 3` client names its own behind it
      // (its create landed, its refusal not yet): the moment the review's race produced.
      const deadline = Date.now() + 5_000;
      while ((await settle<string[]>((done) => admin.getChildren(folder, undefined, done))).length < 2) {
        if (Date.now() > deadline) throw new Error('the waiter did not queue within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const stray = await settle<string>((done) =>
        admin.create(
          `${folder}/_c_${randomUUID()}-sem.3.1-`,
          null,
          zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
          done,
        ),
      );
      await holder.release();
      const outcome = await waiting;
      // Before the fix: InvalidArgumentError "got 4, expected 3".
      expect('error' in outcome ? outcome.error : undefined).toBeUndefined();
      if ('lease' in outcome) await outcome.lease.release();
      await settle<void>((done) => admin.remove(stray, -1, done));
      // The stranger itself is still refused while the holders and waiters ahead of it use 4.
      const stranger = client().semaphore(name, { permits: 3 });
      const held = await client().semaphore(name, { permits: 4 }).acquire({ ttlMs: 30_000 });
      await expect(stranger.acquire({ ttlMs: 30_000, waitMs: 2_000 })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      await held.release();
    } finally {
      await closeRaw(admin);
    }
  });
});
