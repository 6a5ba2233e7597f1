import { type Cluster, startCluster } from '@fencekit/cluster';
import { EtcdClient } from '@fencekit/etcd';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../src/backends/types.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { loadMutants } from '../src/mutation/mutants-module.js';
import { runAimedFault } from '../src/nemesis/aimed.js';
import type { NemesisContext } from '../src/nemesis/context.js';
import { unconfirmedFaults } from '../src/nemesis/observation.js';
import { seededRandom } from '../src/nemesis/random.js';

/**
 * `delete-waiter-key` (issue #13, the `etcd-no-recheck-after-grant` mutant): a waiter's key deleted
 * behind its live session by a separate admin client (which key it picks: delete-waiter.test.ts). On a
 * real 3-member etcd: the key of the waiter behind the head goes, its session stays, the probe sees both,
 * and the adapter's waiter notices: when the head releases, only the waiter that was behind it is
 * granted; the `etcd-no-recheck-after-grant` mutant's waiter is granted beside it.
 */

describe('on a real etcd cluster', () => {
  let cluster: Cluster;
  const namespace = `fencekit-delete-waiter-${process.pid}`;
  const clients: EtcdClient[] = [];
  beforeAll(async () => {
    cluster = await startCluster({ topology: 'etcd', nodes: 3 });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await cluster?.close();
  }, 30_000);

  /**
   * A head holding, two waiters behind it (the victim, then the next); the fault deletes the victim's
   * key; the head releases. Returns who was granted, in order, by 500 ms after the next waiter's grant
   * (a wrongly woken victim re-reads at once on the same release), then lets both finish.
   */
  async function scenario(run: number, wrapVictim?: (locks: EtcdClient) => unknown): Promise<string[]> {
    const prefix = `${namespace}-${run}`;
    const [head, victim, next] = [0, 1, 2].map(() => {
      const c = new EtcdClient({ hosts: [...cluster.endpoints], prefix });
      clients.push(c);
      return c;
    }) as [EtcdClient, EtcdClient, EtcdClient];
    wrapVictim?.(victim);
    const resource = 'r';
    const held = await head.acquire(resource, { ttlMs: 2_000, waitMs: 10_000 });
    const granted: string[] = [];
    const wait = (who: string, client: EtcdClient) =>
      client.acquire(resource, { ttlMs: 2_000, waitMs: 20_000 }).then((lease) => {
        granted.push(who);
        return lease;
      });
    const victimGranted = wait('victim', victim);
    // The victim's key must be created before the next waiter's: wait until it is queued.
    await waitForQueue(head, prefix, 2);
    const nextGranted = wait('next', next);
    await waitForQueue(head, prefix, 3);

    const events: UnindexedEvent[] = [];
    const context = {
      deployment: { endpoints: [...cluster.endpoints], nodes: [] } as unknown as Deployment,
      ttlMs: 1_000,
      sessionMs: 2_000,
      seed: 1,
      namespace: prefix,
      nextWindow: async () => undefined,
      nextEvent: async () => undefined,
      record: (event: UnindexedEvent) => events.push(event),
      progress: () => {},
      signal: new AbortController().signal,
      startedAt: performance.now(),
      applied: 0,
    } satisfies NemesisContext;
    const summary = await runAimedFault('delete-waiter-key', context, seededRandom(1), 5_000);
    expect(summary.applied).toBe(true);
    expect(summary.observed?.started?.seen).toBe(true);
    expect(summary.observed?.started?.detail).toMatch(/key absent; its lease alive/);
    expect(unconfirmedFaults([summary])).toEqual([]);
    expect(events.map((e) => [e.type, e.f])).toEqual([
      ['invoke', 'start'],
      ['ok', 'start'],
      ['invoke', 'stop'],
      ['ok', 'stop'],
    ]);
    const evidence = summary.evidence as { key: string; queueLength: number };
    expect(evidence.queueLength).toBe(3);
    expect(evidence.key).toMatch(new RegExp(`^${prefix}/locks/`));

    await held.release();
    const first = await nextGranted;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen = [...granted];
    await first.release();
    const second = await victimGranted;
    await second.release();
    return seen;
  }

  it('deletes the key of the waiter behind the head; that waiter queues again instead of taking the lock', async () => {
    // The head lets go: the waiter that was behind the victim is next, and only it.
    expect(await scenario(1)).toEqual(['next']);
  }, 60_000);

  it('exposes etcd-no-recheck-after-grant: its waiter takes the lock beside the rightful next one', async () => {
    const { findMutant } = await loadMutants();
    const installed = await findMutant('etcd-no-recheck-after-grant').install();
    const wrap = (locks: EtcdClient) => installed.wrapLocks?.(locks);
    expect((await scenario(2, wrap)).sort()).toEqual(['next', 'victim']);
  }, 60_000);
});

/** Waits (bounded) until the run's one lock queue holds `count` keys. */
async function waitForQueue(client: EtcdClient, namespace: string, count: number): Promise<void> {
  const until = performance.now() + 10_000;
  while (performance.now() < until) {
    const keys = await client.etcd.getAll().prefix(`${namespace}/locks/`).keys();
    if (keys.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the queue never held ${count} keys`);
}
