import type { Cluster } from '@fencekit/cluster';
import { LockLostError } from '@fencekit/core';
import { UNSURE, ZkSharedLockClient } from '@fencekit/zk';
import { afterEach, expect, it } from 'vitest';
import { followerLagMs, startEnsemble } from './support/ensemble.js';
import { ResourceLog } from './support/resource-log.js';

/** As the mutex's fault tests: longer than the servers' syncLimit × tickTime (2 s). */
const sessionTimeoutMs = 4_000;

let cluster: Cluster | undefined;
const clients: ZkSharedLockClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await cluster?.close();
  cluster = undefined;
});

it('cutClients: a writer cut off from the ensemble stops (unsure) before the waiting reader is granted', async () => {
  cluster = await startEnsemble({ topology: 'zookeeper', nodes: 3, proxy: true });
  const isolated = cluster.nodes[0]!;
  const others = cluster.nodes.slice(1).map((n) => n.endpoint);
  // A can reach only the node that will be cut off; B only the others.
  const a = new ZkSharedLockClient({ servers: isolated.endpoint, sessionTimeoutMs, followerLagMs });
  const b = new ZkSharedLockClient({ servers: others.join(','), sessionTimeoutMs, followerLagMs });
  clients.push(a, b);
  const name = `shared-faults/${Math.random().toString(36).slice(2)}`;
  const log = new ResourceLog();

  const writer = await a.readWriteLock(name).write({ ttlMs: 60_000 });
  writer.signal.addEventListener('abort', () => log.record('A', 'stopped'));
  const waiting = b
    .readWriteLock(name)
    .read({ ttlMs: 60_000, waitMs: sessionTimeoutMs * 6 })
    .then((lease) => {
      log.record('B', 'granted');
      return lease;
    });
  waiting.catch(() => {});
  await new Promise((r) => setTimeout(r, 300));

  await cluster.faults.cutClients(isolated.id);
  log.record('nemesis', 'cutClients');
  const reader = await waiting;

  expect(log.at('A', 'stopped'), log.describe()).toBeLessThan(log.at('B', 'granted'));
  const reason = writer.signal.reason as LockLostError;
  expect(reason).toBeInstanceOf(LockLostError);
  expect(reason.reason).toBe(UNSURE);
  expect(reader.fence).toBeGreaterThan(writer.fence);
  await cluster.faults.heal();
  await reader.release();
}, 240_000);
