import { randomUUID } from 'node:crypto';
import type { Cluster } from '@fencekit/cluster';
import { RedisLockClient } from '@fencekit/redis';
import { describe, expect, it } from 'vitest';
import { ownDeployment, sentinelConnection } from './support/deployments.js';

/**
 * Clients that follow the primary with ioredis' `failoverDetector` (as the harness and applications configured
 * for failover do) keep following it after a promotion. The `+switch-master` of a failover whose old primary was
 * killed reaches each client while it is reconnecting: ioredis' detector then closes the connector in the middle
 * of its Sentinel lookup, the lookup fails with "Connection is closed." and ioredis ends the connection for good
 * (status 'end', no retry). Every acquire afterwards failed at once, also after the heal (#17: a harness run's 5
 * clients never granted again for the remaining 20 s; 5 of 5 clients ended in a reproduction).
 */
const CLIENTS = 3;
/** How long a client may take to be granted again once the deployment is whole: a bound, not a speed target. */
const REGRANT_BOUND_MS = 30_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('redis-sentinel: clients follow the promoted primary', () => {
  const deployment = ownDeployment('redis-sentinel');

  it('are granted again after a lagged failover and its heal', async () => {
    const cluster: Cluster = deployment();
    const clients = Array.from(
      { length: CLIENTS },
      () => new RedisLockClient({ connection: { ...sentinelConnection(cluster), failoverDetector: true } }),
    );
    const resource = `sentinel-follow-${randomUUID()}`;
    let stop = false;
    // Each client keeps asking through the failover, so it is reconnecting when the +switch-master arrives.
    const load = clients.map(async (client) => {
      while (!stop) {
        try {
          const lease = await client.acquire(resource, { ttlMs: 3_000, waitMs: 2_000 });
          await lease.release().catch(() => undefined);
        } catch {
          await sleep(20);
        }
      }
    });
    try {
      for (const client of clients)
        await (await client.acquire(resource, { ttlMs: 3_000, waitMs: 10_000 })).release();
      const primary = await cluster.leader();
      await cluster.faults.failover({ how: 'lagged', ...(primary ? { node: primary } : {}) });
      await cluster.faults.heal();
      stop = true;
      await Promise.all(load);
      const granted = await Promise.all(
        clients.map((client) => grantedWithin(client, resource, REGRANT_BOUND_MS)),
      );
      expect({ granted, statuses: clients.map((client) => client.redis.status) }).toEqual({
        granted: clients.map(() => 'granted'),
        statuses: clients.map(() => 'ready'),
      });
    } finally {
      stop = true;
      await Promise.all(load);
      await Promise.all(clients.map((client) => client.close()));
    }
  }, 180_000);
});

/** Retries acquire until one is granted or `boundMs` has passed; 'granted' or the last failure's message. */
async function grantedWithin(client: RedisLockClient, resource: string, boundMs: number): Promise<string> {
  const deadline = Date.now() + boundMs;
  let last = 'no attempt';
  while (Date.now() < deadline) {
    try {
      const lease = await client.acquire(resource, { ttlMs: 3_000, waitMs: 5_000 });
      await lease.release().catch(() => undefined);
      return 'granted';
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
      await sleep(200);
    }
  }
  return last;
}
