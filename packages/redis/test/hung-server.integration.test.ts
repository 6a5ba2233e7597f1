import { randomUUID } from 'node:crypto';
import { type Cluster, type ClusterNode, startCluster } from '@fencekit/cluster';
import { ClientClosedError, LockAbortedError, type ManagedLease, monotonicNow } from '@fencekit/core';
import {
  CANCEL_TIMEOUT_MS,
  DEFAULT_COMMAND_TIMEOUT_MS,
  QUIT_TIMEOUT_MS,
  RedisLockClient,
  STOP_GRACE_MS,
} from '@fencekit/redis/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlesGrownSince, handlesNow } from './support/handles.js';
import { watchOpenResources } from './support/open-resources.js';
import { untilQueued } from './support/queue.js';

// Its own server: this file stops it (SIGSTOP). A stopped redis-server keeps its sockets open and
// answers nothing, so every request hangs until a client-side bound ends it.
let cluster: Cluster;
let server: ClusterNode;
beforeAll(async () => {
  cluster = await startCluster({ topology: 'redis', nodes: 1 });
  server = cluster.nodes[0] as ClusterNode;
});
afterAll(async () => {
  await cluster?.close();
});
afterEach(async () => {
  await cluster.faults.heal();
});

/** Margin for a loaded machine on top of each bound. */
const SLACK_MS = 1_500;

/** Where the timers and sockets a client opens are made: its sources, core's helpers, ioredis. */
const CLIENT_CODE = /packages\/(redis|core)\/src\/|node_modules\/ioredis\//;

/** Long enough for the runtime to report closed handles and cleared timers, far below ioredis' 2 s. */
const CLOSED_GRACE_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until `count` waiters are queued, asked over `redis` so no helper socket is opened. */
async function untilQueuedOn(c: RedisLockClient, resource: string, count: number): Promise<void> {
  const deadline = monotonicNow() + 10_000;
  while (Number(await c.redis.zcard(`fencekit:{${resource}}:queue`)) < count) {
    if (monotonicNow() > deadline) throw new Error(`${count} waiters not queued on ${resource} within 10 s`);
    await sleep(5);
  }
}

function client(): RedisLockClient {
  return new RedisLockClient({ connection: `redis://${server.endpoint}` });
}

describe('RedisLockClient with a hung server (SIGSTOP, socket open)', () => {
  it('a queued acquire ends within waitMs plus the stop grace', async () => {
    const holder = client();
    const waiter = client();
    const r = `hung-wait-${randomUUID()}`;
    let lease: ManagedLease<bigint> | undefined;
    try {
      lease = await holder.acquire(r, { ttlMs: 30_000 });
      const waitMs = 3_000;
      const startedAt = monotonicNow();
      const waiting = waiter.acquire(r, { ttlMs: 5_000, waitMs }).catch((error: unknown) => error);
      await untilQueued(server.endpoint, r, 1);
      await cluster.faults.pause(server.id);
      const failure = await waiting;
      const elapsed = monotonicNow() - startedAt;
      expect(failure).toBeInstanceOf(Error);
      // Before the fix: 5 s (the give-back waited 2 s for the stopped server).
      expect(elapsed).toBeLessThan(waitMs + STOP_GRACE_MS + 1_000);
    } finally {
      await cluster.faults.heal();
      await lease?.release().catch(() => undefined);
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  it('close() of a subscribed waiter is bounded and leaves no handles', async () => {
    const before = handlesNow();
    const holder = client();
    const waiter = client();
    const r = `hung-close-${randomUUID()}`;
    try {
      await holder.acquire(r, { ttlMs: 30_000 });
      const waiting = waiter.acquire(r, { ttlMs: 5_000, waitMs: 60_000 }).catch((error: unknown) => error);
      await untilQueued(server.endpoint, r, 1);
      await cluster.faults.pause(server.id);
      const startedAt = monotonicNow();
      await waiter.close();
      // Its give-back, then QUIT on both connections side by side. Before the fix: about 12 s (the
      // subscriber's and the command connection's QUIT each waited 5 s, one after the other).
      expect(monotonicNow() - startedAt).toBeLessThan(CANCEL_TIMEOUT_MS + QUIT_TIMEOUT_MS + SLACK_MS);
      expect(await waiting).toBeInstanceOf(ClientClosedError);
    } finally {
      await cluster.faults.heal();
      await Promise.all([holder.close(), waiter.close()]);
    }
    expect(await handlesGrownSince(before, 3_000)).toEqual([]);
  });

  it("an acquire whose first request hangs fails after that request's 5 s bound, not later", async () => {
    const c = client();
    try {
      // Connected first, so the stop below hangs an open socket.
      await (await c.acquire(`warm-${randomUUID()}`, { ttlMs: 1_000 })).release();
      await cluster.faults.pause(server.id);
      const startedAt = monotonicNow();
      const failure = await c
        .acquire(`hung-first-${randomUUID()}`, { ttlMs: 5_000, waitMs: 60_000 })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect(monotonicNow() - startedAt).toBeLessThan(DEFAULT_COMMAND_TIMEOUT_MS + STOP_GRACE_MS + SLACK_MS);
    } finally {
      await cluster.faults.heal();
      await c.close();
    }
  });

  it("the caller's abort ends an acquire whose first request hangs, and the request is still cleaned up", async () => {
    const c = client();
    const other = client();
    const r = `hung-abort-${randomUUID()}`;
    try {
      // Connected first, so the stop below hangs an open socket.
      await (await c.acquire(`warm-${randomUUID()}`, { ttlMs: 1_000 })).release();
      await cluster.faults.pause(server.id);
      const controller = new AbortController();
      const acquiring = c
        .acquire(r, { ttlMs: 5_000, waitMs: 60_000, signal: controller.signal })
        .catch((error: unknown) => error);
      await sleep(300);
      const abortedAt = monotonicNow();
      controller.abort(new Error('caller gave up'));
      const failure = await acquiring;
      // Before the fix: an IndeterminateError 4.7 s after the abort (the request's own 5 s bound).
      expect(failure).toBeInstanceOf(LockAbortedError);
      expect(monotonicNow() - abortedAt).toBeLessThan(STOP_GRACE_MS + SLACK_MS);
      // The request was not abandoned: the resumed server grants it, and the client gives it back
      // (close() waits for that), so the lock is free for the next client.
      await cluster.faults.heal();
      await c.close();
      const lease = await other.tryAcquire(r, { ttlMs: 5_000 });
      expect(lease).not.toBeNull();
      await lease?.release();
    } finally {
      await cluster.faults.heal();
      await Promise.all([c.close(), other.close()]);
    }
  });

  it('close() with the server stopped leaves no socket or timer open once it resolves', async () => {
    const resources = watchOpenResources(CLIENT_CODE);
    const holder = client();
    const waiter = client();
    const r = `hung-leftovers-${randomUUID()}`;
    try {
      await holder.acquire(r, { ttlMs: 30_000 });
      // Subscribed and queued: two connections, both with a command in flight when closed.
      const waiting = waiter.acquire(r, { ttlMs: 5_000, waitMs: 60_000 }).catch((error: unknown) => error);
      await untilQueuedOn(holder, r, 1);
      await cluster.faults.pause(server.id);
      await Promise.all([holder.close(), waiter.close()]);
      await sleep(CLOSED_GRACE_MS);
      // Before the fix: 4 sockets and 5 timers, ioredis destroying the half-closed sockets 2 s later.
      expect(resources.open()).toEqual([]);
      expect(await waiting).toBeInstanceOf(ClientClosedError);
    } finally {
      resources.stop();
      await cluster.faults.heal();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
});
