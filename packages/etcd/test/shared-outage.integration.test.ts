import { Socket } from 'node:net';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { monotonicNow } from '@fencekit/core';
import { EtcdSharedLockClient } from '@fencekit/etcd';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// A waiter of the semaphore or read-write lock whose etcd stops answering (SIGSTOP, as in a long GC
// pause or a frozen VM) while it waits for room: the README bounds its answer by waitMs + callTimeoutMs
// (a timeout), and an abort by one callTimeoutMs (the clean-up request that cannot be answered), as
// for the mutex. Before the fix it took a read of the room and two clean-up requests in a row, each
// bounded by callTimeoutMs only, and then said the backend was unavailable rather than timed out.

const callTimeoutMs = 3_000;
let cluster: Cluster;
const clients: EtcdSharedLockClient[] = [];
function client(): EtcdSharedLockClient {
  const c = new EtcdSharedLockClient({ hosts: cluster.endpoints.map((e) => `http://${e}`), callTimeoutMs });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  cluster = await startCluster({ topology: 'etcd', nodes: 1 });
});
afterEach(async () => {
  await cluster.faults.heal();
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await cluster?.close();
});

function unique(label: string): string {
  return `outage-${label}/${Math.random().toString(36).slice(2)}`;
}

type Kind = 'semaphore' | 'rwlock';

/** A holder on one client and a waiter (not yet started) on another, for semaphore or read-write lock. */
async function heldAndWaiter(kind: Kind) {
  const [a, b] = [client(), client()];
  const name = unique(kind);
  const held =
    kind === 'semaphore'
      ? await a.semaphore(name, { permits: 1 }).acquire({ ttlMs: 60_000 })
      : await a.readWriteLock(name).write({ ttlMs: 60_000 });
  const wait = (options: { waitMs: number; signal?: AbortSignal }) =>
    kind === 'semaphore'
      ? b.semaphore(name, { permits: 1 }).acquire({ ttlMs: 10_000, ...options })
      : b.readWriteLock(name).read({ ttlMs: 10_000, ...options });
  return { held, wait };
}

async function outcome(pending: Promise<unknown>, since: number) {
  const error = await pending.then(
    () => new Error('granted during the outage'),
    (e: unknown) => e,
  );
  return { code: (error as { code?: string }).code, ms: monotonicNow() - since };
}

const id = () => cluster.nodes[0]!.id;

describe.each(['semaphore', 'rwlock'] as const)('etcd %s waiter during an outage', (kind) => {
  it('times out within waitMs + callTimeoutMs, with LockTimeoutError', async () => {
    const { wait } = await heldAndWaiter(kind);
    const waitMs = 2_000;
    const started = monotonicNow();
    const pending = wait({ waitMs });
    // In the room wait by now (one round trip to queue, one to enter): then etcd stops answering.
    await new Promise((r) => setTimeout(r, 300));
    await cluster.faults.pause(id());
    const { code, ms } = await outcome(pending, started);
    await cluster.faults.resume(id());
    expect(code).toBe('timeout');
    // One clean-up request may go unanswered after the wait: at most callTimeoutMs more. (Before the
    // fix: a read of the room, then two clean-ups, each callTimeoutMs.) Half a timeout of slack.
    expect(ms).toBeLessThan(waitMs + callTimeoutMs * 1.5);
  });

  it('an abort answers within one callTimeoutMs', async () => {
    const { wait } = await heldAndWaiter(kind);
    const controller = new AbortController();
    const pending = wait({ waitMs: 30_000, signal: controller.signal });
    await new Promise((r) => setTimeout(r, 300));
    await cluster.faults.pause(id());
    const abortedAt = monotonicNow();
    controller.abort(new Error('caller stopped'));
    const { code, ms } = await outcome(pending, abortedAt);
    await cluster.faults.resume(id());
    expect(code).toBe('aborted');
    expect(ms).toBeLessThan(callTimeoutMs * 1.5);
  });
});

/** Sockets destroyed but whose handle is still open (its close callback has not run yet). */
function closingSockets(): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => h instanceof Socket && h.destroyed).length;
}

describe('etcd shared client close() during an outage', () => {
  it('leaves no socket handle behind once it resolves', async () => {
    const { wait } = await heldAndWaiter('semaphore');
    const waiting = wait({ waitMs: 30_000 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    await cluster.faults.pause(id());
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all(clients.splice(0).map((c) => c.close()));
    // Before the fix the destroyed sockets' handles were still open here (closed a loop turn later).
    const left = closingSockets();
    await cluster.faults.resume(id());
    await waiting;
    expect(left).toBe(0);
  });
});
