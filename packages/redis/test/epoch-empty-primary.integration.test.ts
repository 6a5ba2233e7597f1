import { randomUUID } from 'node:crypto';
import { BackendUnavailableError, sleep } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownDeployment, sentinelConnection } from './support/deployments.js';

/**
 * Issue #17's reissued epoch fences (harness seeds 12 and 13 of redis-sentinel-epoch under failover-lagged): the
 * killed primary, restarted without persistence, comes back empty and calls itself primary (Sentinel rewrote its
 * config when it was promoted) until the Sentinels demote it, seconds later. A client that reaches it meanwhile
 * (through a Sentinel that has not yet learnt of the failover: here every address the Sentinels name is mapped to
 * it, so the test does not depend on that race) was granted fences from epoch 1 and counter 1 again: the empty
 * dataset had no epoch record. Whatever it is granted there must stay above every fence handed out before the
 * failover, or be refused.
 */
const EPOCH = 10n ** 12n;

describe('redis-sentinel: epoch fences on a primary restarted empty', () => {
  const deploymentOf = ownDeployment('redis-sentinel');

  it('no grant on the restarted empty primary is at or below a fence of the old primary', async () => {
    const deployment = deploymentOf();
    const connection = sentinelConnection(deployment);
    const client = new RedisLockClient({ connection, fence: 'epoch' });
    const clients = [client];
    const resource = `restarted-${randomUUID()}`;
    try {
      let before = 0n;
      for (let i = 0; i < 5; i++) {
        const lease = await client.acquire(resource, { ttlMs: 5000, waitMs: 10_000 });
        if (lease.fence > before) before = lease.fence;
        await lease.release();
      }
      const { from } = await deployment.faults.failover({ how: 'lagged' });
      const promoted = await deployment.faults.observe({
        fault: 'failover',
        node: from,
        phase: 'started',
        timeoutMs: 60_000,
      });
      expect(promoted.seen, promoted.detail).toBe(true);
      // Back as the harness's heal brings it: empty, and primary by its own config until the Sentinels demote it.
      await deployment.faults.restart(from);
      const old = deployment.nodes.find((n) => n.id === from);
      if (old === undefined) throw new Error(`no node ${from}`);
      const [host, port] = old.endpoint.split(':') as [string, string];
      const toOld = Object.fromEntries(
        Object.keys(deployment.natMap ?? {}).map((announced) => [announced, { host, port: Number(port) }]),
      );
      const misled = new RedisLockClient({ connection: { ...connection, natMap: toOld }, fence: 'epoch' });
      clients.push(misled);

      const probe = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
      const granted: bigint[] = [];
      const refused: unknown[] = [];
      try {
        // While the restarted node still says it is primary (bounded: the Sentinels demote it within seconds).
        for (let i = 0; i < 40 && (await probe.role())[0] === 'master'; i++) {
          try {
            const lease = await misled.tryAcquire(resource, { ttlMs: 5000 });
            if (lease) {
              granted.push(lease.fence);
              await lease.release().catch(() => undefined);
            }
          } catch (error) {
            refused.push(error);
          }
          await sleep(100);
        }
      } finally {
        probe.disconnect();
      }
      expect(
        granted.length + refused.length,
        'the restarted primary was never tried as primary',
      ).toBeGreaterThan(0);
      for (const fence of granted) {
        expect(fence, `granted ${fence} (epoch ${fence / EPOCH}) after ${before}`).toBeGreaterThan(before);
      }
      for (const error of refused) expect(error).toBeInstanceOf(BackendUnavailableError);

      // Healed: the grants of the promoted replica are above the old primary's too.
      await deployment.faults.heal();
      const lease = await client.acquire(resource, { ttlMs: 5000, waitMs: 30_000 });
      expect(lease.fence).toBeGreaterThan(before);
      for (const fence of granted) expect(lease.fence).not.toBe(fence);
      await lease.release();
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }, 240_000);
});
