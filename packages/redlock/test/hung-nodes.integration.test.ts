import { randomUUID } from 'node:crypto';
import { type Cluster, type ClusterNode, startCluster } from '@fencekit/cluster';
import { ClientClosedError, type ManagedLease, monotonicNow } from '@fencekit/core';
import { QUIT_TIMEOUT_MS } from '@fencekit/redis/internal';
import { RedlockClient } from '@fencekit/redlock';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlesGrownSince, handlesNow } from '../../redis/test/support/handles.js';
import { watchOpenResources } from '../../redis/test/support/open-resources.js';
import { untilQueued } from '../../redis/test/support/queue.js';
import { closeBoundMs, RELEASE_STRAGGLERS_MS, RELEASE_TIMEOUT_MS, WAIT_OVERRUN_MS } from '../src/bounds.js';

// Its own three nodes: this file stops (SIGSTOP) some of them. A stopped redis-server keeps its
// sockets open and answers nothing: every request to it hangs until a client-side bound ends it.
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ topology: 'redis-independent', nodes: 3 });
});
afterAll(async () => {
  await cluster?.close();
});
afterEach(async () => {
  await cluster.faults.heal();
});

/** Margin for a loaded machine (2 cores shared by many test processes) on top of each bound. */
const SLACK_MS = 1_500;
const NODE_TIMEOUT_MS = 100;
const CLOSE_BOUND_MS = closeBoundMs(NODE_TIMEOUT_MS);

/** Where the timers and sockets a client opens are made: its sources, core's helpers, ioredis. */
const CLIENT_CODE = /packages\/(redis|redlock|core)\/src\/|node_modules\/ioredis\//;
/** fencekit's own code only: a caller's own ioredis instances (and their sockets) are the caller's. */
const FENCEKIT_CODE = /packages\/(redis|redlock|core)\/src\//;
/** Long enough for the runtime to report closed handles and cleared timers, far below the 2 s leaks. */
const CLOSED_GRACE_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `untilQueued` on every node, over connections closed before it returns: a helper socket still
 * closing when the nodes are stopped would count as one the clients left open.
 */
async function untilQueuedEverywhere(resource: string): Promise<void> {
  for (const node of cluster.nodes) {
    const redis = new Redis(`redis://${node.endpoint}`);
    try {
      const deadline = monotonicNow() + 10_000;
      while (Number(await redis.zcard(`fencekit:{${resource}}:queue`)) < 1) {
        if (monotonicNow() > deadline) throw new Error(`no waiter queued on ${resource} within 10 s`);
        await sleep(5);
      }
    } finally {
      const ended = new Promise((resolve) => redis.once('end', resolve));
      await redis.quit().catch(() => redis.disconnect());
      await ended;
    }
  }
}

/**
 * Waits (bounded) until every node holds the lock key of each of `resources`, over connections
 * closed before it returns, then a little longer for the client to read those answers: a request
 * still unanswered when the nodes are stopped (a loaded machine's slow third node) would be one
 * close() must wait for (its stragglers' bound), which is not what the test measures.
 */
async function untilHeldEverywhere(resources: readonly string[]): Promise<void> {
  for (const node of cluster.nodes) {
    const redis = new Redis(`redis://${node.endpoint}`);
    try {
      const deadline = monotonicNow() + 10_000;
      const keys = resources.map((r) => `fencekit:{${r}}:lock`);
      while (Number(await redis.exists(...keys)) < keys.length) {
        if (monotonicNow() > deadline)
          throw new Error(`${resources.join(', ')} not held on ${node.id} within 10 s`);
        await sleep(5);
      }
    } finally {
      const ended = new Promise((resolve) => redis.once('end', resolve));
      await redis.quit().catch(() => redis.disconnect());
      await ended;
    }
  }
  await sleep(CLOSED_GRACE_MS);
}

function client(): RedlockClient {
  return new RedlockClient({
    nodes: cluster.nodes.map((n) => `redis://${n.endpoint}`),
    nodeTimeoutMs: NODE_TIMEOUT_MS,
  });
}

async function warm(c: RedlockClient): Promise<void> {
  // Connect to every node first, so the stops below hit open sockets (the hang under test).
  await (await c.acquire(`warm-${randomUUID()}`, { ttlMs: 1_000 })).release();
}

describe('RedlockClient with hung nodes (SIGSTOP, sockets open)', () => {
  it('close() returns within its bound while a subscribed node hangs, and leaves no handles', async () => {
    const [, , n3] = cluster.nodes as ClusterNode[];
    if (!n3) throw new Error('expected 3 nodes');
    const before = handlesNow();
    const holder = client();
    const waiter = client();
    const r = `hung-close-${randomUUID()}`;
    let lease: ManagedLease<undefined> | undefined;
    try {
      await warm(holder);
      await warm(waiter);
      lease = await holder.acquire(r, { ttlMs: 30_000 });
      // The waiter subscribes on every node (n3 included) and queues.
      const waiting = waiter.acquire(r, { ttlMs: 5_000, waitMs: 60_000 }).catch((error: unknown) => error);
      await untilQueued(n3.endpoint, r, 1);
      await cluster.faults.pause(n3.id);
      const startedAt = monotonicNow();
      // Before the fix: pending until n3 resumes (the subscriber's QUIT had no bound).
      const closed = await Promise.race([
        waiter.close().then(() => 'closed'),
        new Promise((resolve) => setTimeout(resolve, CLOSE_BOUND_MS + SLACK_MS, 'still pending')),
      ]);
      expect(closed).toBe('closed');
      expect(monotonicNow() - startedAt).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
      expect(await waiting).toBeInstanceOf(ClientClosedError);
      // The holder's lease is given back by close() too, with n3 still stopped.
      const holderStartedAt = monotonicNow();
      await holder.close();
      expect(monotonicNow() - holderStartedAt).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
      lease = undefined;
    } finally {
      await cluster.faults.heal();
      await lease?.release().catch(() => undefined);
      await Promise.all([holder.close(), waiter.close()]);
    }
    // Nothing the two clients opened is left: no timer, no socket (n3 is still only just resumed).
    expect(await handlesGrownSince(before, 3_000)).toEqual([]);
  });

  it('acquire ends within waitMs plus its documented overrun with 2 of 3 nodes hung', async () => {
    const [, n2, n3] = cluster.nodes as ClusterNode[];
    if (!n2 || !n3) throw new Error('expected 3 nodes');
    const c = client();
    try {
      await warm(c);
      await cluster.faults.pause(n2.id);
      await cluster.faults.pause(n3.id);
      const waitMs = 3_000;
      const startedAt = monotonicNow();
      const failure = await c
        .acquire(`hung-wait-${randomUUID()}`, { ttlMs: 5_000, waitMs })
        .catch((error: unknown) => error);
      const elapsed = monotonicNow() - startedAt;
      expect(failure).toBeInstanceOf(Error);
      expect(elapsed).toBeGreaterThanOrEqual(waitMs - 5);
      // Before the fix: 5.1 s (the in-flight round, then a 2 s give-back to the hung nodes).
      expect(elapsed).toBeLessThan(waitMs + WAIT_OVERRUN_MS + 1_000);
      // close() still bounded with the two nodes hung.
      const closeStartedAt = monotonicNow();
      await c.close();
      expect(monotonicNow() - closeStartedAt).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
    } finally {
      await cluster.faults.heal();
      await c.close();
    }
  });

  it('close() stays within its bound while a release of the caller is stuck and another lease is held', async () => {
    const [, n2, n3] = cluster.nodes as ClusterNode[];
    if (!n2 || !n3) throw new Error('expected 3 nodes');
    const before = handlesNow();
    const c = client();
    try {
      await warm(c);
      const released = `hung-release-${randomUUID()}`;
      const held = `hung-held-${randomUUID()}`;
      const first = await c.acquire(released, { ttlMs: 30_000 });
      await c.acquire(held, { ttlMs: 30_000 });
      // Every node answered both acquires (and warm()'s release before them, in order): seen once in
      // CI, a slow node's earlier answer still in flight made close() wait its stragglers' 2 s (5.0 s).
      await untilHeldEverywhere([released, held]);
      await cluster.faults.pause(n2.id);
      await cluster.faults.pause(n3.id);
      // No quorum can answer: this release waits its own bound, then its slowest nodes'.
      const releasing = first.release().catch((error: unknown) => error);
      const startedAt = monotonicNow();
      await c.close();
      const took = monotonicNow() - startedAt;
      expect(took).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
      // Here: both leases released side by side (2 s without a quorum), then QUIT (1 s). Before
      // the fix 7 s: each command connection's QUIT waited 5 s for its stopped node.
      expect(took).toBeLessThan(RELEASE_TIMEOUT_MS + QUIT_TIMEOUT_MS + SLACK_MS);
      expect(await releasing).toBeInstanceOf(Error);
    } finally {
      await cluster.faults.heal();
      await c.close();
    }
    expect(await handlesGrownSince(before, 3_000)).toEqual([]);
  });

  it('close() with every node stopped leaves no socket or timer open once it resolves', async () => {
    const resources = watchOpenResources(CLIENT_CODE);
    const holder = client();
    const waiter = client();
    const r = `hung-leftovers-${randomUUID()}`;
    try {
      await warm(holder);
      await warm(waiter);
      await holder.acquire(r, { ttlMs: 30_000 });
      // The waiter subscribes on every node and queues: nine connections in all, and a lease to
      // give back whose release no node will answer.
      const waiting = waiter.acquire(r, { ttlMs: 5_000, waitMs: 60_000 }).catch((error: unknown) => error);
      await untilQueuedEverywhere(r);
      for (const n of cluster.nodes) await cluster.faults.pause(n.id);
      await Promise.all([waiter.close(), holder.close()]);
      await sleep(CLOSED_GRACE_MS);
      // Before the fix: 9 sockets and 9-10 timers, ioredis destroying the half-closed sockets 2 s later.
      expect(resources.open()).toEqual([]);
      expect(await waiting).toBeInstanceOf(ClientClosedError);
    } finally {
      resources.stop();
      await cluster.faults.heal();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  it("close() does not leave the wait for a released lease's slowest node running (caller's own connections)", async () => {
    const [, , n3] = cluster.nodes as ClusterNode[];
    if (!n3) throw new Error('expected 3 nodes');
    // The caller's instances: close() leaves them open, so the request to the stopped node stays
    // unanswered after close() and only close() itself can end the wait for it.
    const connections = cluster.nodes.map((n) => new Redis(`redis://${n.endpoint}`));
    const resources = watchOpenResources(FENCEKIT_CODE);
    const c = new RedlockClient({ nodes: connections, nodeTimeoutMs: NODE_TIMEOUT_MS });
    try {
      await warm(c);
      await c.acquire(`hung-straggler-${randomUUID()}`, { ttlMs: 30_000 });
      // Every earlier request answered, n3's part of warm()'s release included (a connection
      // answers in order), so the only one left to n3 is the release close() sends.
      await Promise.all(connections.map((redis) => redis.ping()));
      await cluster.faults.pause(n3.id);
      const startedAt = monotonicNow();
      // Its release returns at the quorum of the two live nodes; n3's part is still in flight.
      await c.close();
      // Not held up by n3 for the stragglers' whole bound either.
      expect(monotonicNow() - startedAt).toBeLessThan(RELEASE_STRAGGLERS_MS);
      await sleep(CLOSED_GRACE_MS);
      // Before the fix: the 2 s wait for n3, registered after close() had stopped waiting.
      expect(resources.open()).toEqual([]);
    } finally {
      resources.stop();
      await cluster.faults.heal();
      await c.close();
      await Promise.all(connections.map((redis) => redis.quit().catch(() => redis.disconnect())));
    }
  });

  it('close() with a node killed (its sockets already closed) leaves no timer open once it resolves', async () => {
    const [, , n3] = cluster.nodes as ClusterNode[];
    if (!n3) throw new Error('expected 3 nodes');
    const resources = watchOpenResources(CLIENT_CODE);
    const holder = client();
    const waiter = client();
    const r = `killed-leftovers-${randomUUID()}`;
    try {
      await warm(holder);
      await holder.acquire(r, { ttlMs: 30_000 });
      // Subscribed on every node, n3 included: both kinds of connection see n3 die.
      const waiting = waiter.acquire(r, { ttlMs: 5_000, waitMs: 60_000 }).catch((error: unknown) => error);
      await untilQueuedEverywhere(r);
      await cluster.faults.kill(n3.id);
      // Long enough for ioredis to be between reconnect attempts (its delay grows by 50 ms a try),
      // its sockets to n3 closed, when close() comes.
      await sleep(1_000);
      await Promise.all([waiter.close(), holder.close()]);
      await sleep(CLOSED_GRACE_MS);
      // Before the fix: ioredis' 2 s timers, armed by QUIT and disconnect() on the closed sockets.
      expect(resources.open()).toEqual([]);
      expect(await waiting).toBeInstanceOf(ClientClosedError);
    } finally {
      resources.stop();
      await cluster.faults.heal();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
});
