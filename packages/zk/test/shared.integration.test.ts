/// <reference path="../src/node-zookeeper-client.d.ts" />
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { injectCluster } from '@fencekit/cluster/vitest';
import { ZkSharedLockClient } from '@fencekit/zk';
import zookeeper, { type Client, type ClientOptions, type Stat } from 'node-zookeeper-client';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRaw, connectRaw, settle } from '../bench/raw.js';
import { queueOrder, segmentFor } from '../src/paths.js';
import { followerLagMs } from './support/ensemble.js';
import { watchesByPath } from './support/four-letter.js';

const cluster = injectCluster('zookeeper');
const servers = cluster.endpoints.join(',');
const sessionTimeoutMs = 4_000;

// Every node-zookeeper-client the adapter creates is recorded (and otherwise left alone), so a test
// can find the one owning a node by session id and expire that session the way the ensemble does.
const opened = new Set<Client>();
const createRaw = zookeeper.createClient.bind(zookeeper);
zookeeper.createClient = (connection: string, options?: ClientOptions): Client => {
  const client = createRaw(connection, options);
  opened.add(client);
  return client;
};

const clients: ZkSharedLockClient[] = [];
function client(options: { servers?: string } = {}): ZkSharedLockClient {
  const c = new ZkSharedLockClient({ servers: options.servers ?? servers, sessionTimeoutMs, followerLagMs });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

function unique(label: string): string {
  return `shared-${label}/${Math.random().toString(36).slice(2)}`;
}

const semaphoreFolder = (name: string) => `/fencekit/semaphores/${segmentFor(name)}`;
const rwlockFolder = (name: string) => `/fencekit/rwlocks/${segmentFor(name)}`;

async function listing(path: string): Promise<string[]> {
  const admin = await connectRaw(servers, 10_000);
  try {
    const children = await settle<string[]>((done) => admin.getChildren(path, undefined, done));
    return children.sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10)));
  } finally {
    await closeRaw(admin);
  }
}

/** Resolves once `check` holds, polling every 25 ms for at most `withinMs`. */
async function eventually(check: () => Promise<boolean>, withinMs: number, what: string): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Expires the session that owns `node`: a second connection takes it over (same id and password, so
 * the ensemble drops the first connection) and closes it, which ends the session and deletes its
 * ephemeral nodes; the adapter, reconnecting, is told the session expired.
 */
async function expireOwnerOf(node: string): Promise<void> {
  const admin = await connectRaw(servers, 10_000);
  try {
    const stat = await settle<Stat | null>((done) => admin.exists(node, undefined, done));
    if (!stat) throw new Error(`${node} is already gone`);
    const owner = [...opened].find((c) => c.getSessionId().equals(stat.ephemeralOwner));
    if (!owner) throw new Error(`no recorded client owns ${node}`);
    const sessionPassword = (owner as Client & { getSessionPassword(): Buffer }).getSessionPassword();
    const takeover = createRaw(servers, {
      sessionTimeout: sessionTimeoutMs,
      retries: 0,
      sessionId: owner.getSessionId(),
      sessionPassword,
    } as ClientOptions);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no takeover within 10 s')), 10_000);
      takeover.once('connected', () => {
        clearTimeout(timer);
        resolve();
      });
      takeover.connect();
    });
    await closeRaw(takeover);
    await eventually(
      async () => (await settle<Stat | null>((done) => admin.exists(node, undefined, done))) === null,
      10_000,
      `${node} outlived its session`,
    );
  } finally {
    await closeRaw(admin);
  }
}

const long = { ttlMs: 30_000, waitMs: 20_000 };

describe('ZkSharedLockClient on a real ensemble', () => {
  it('a SIGKILLed holder process gives its permits back when its session expires', async () => {
    const name = unique('killed-holder');
    const script = fileURLToPath(new URL('./fixtures/shared-holder.mjs', import.meta.url));
    const child = spawn(
      process.execPath,
      [script, servers, name, '2', String(sessionTimeoutMs), String(followerLagMs)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const [line] = (await once(child.stdout, 'data', { signal: AbortSignal.timeout(20_000) })) as [Buffer];
      const heldFence = BigInt(line.toString().trim().split(' ')[1] ?? '');
      // Bounded by four session timeouts: the permits come back when the dead holder's session expires.
      const waiting = client()
        .semaphore(name, { permits: 2 })
        .acquire({ ttlMs: 10_000, waitMs: sessionTimeoutMs * 4, permits: 2 });
      await eventually(
        async () => (await listing(`${semaphoreFolder(name)}/slots`)).length === 2,
        5_000,
        'queued',
      );
      child.kill('SIGKILL');
      const lease = await waiting;
      expect(lease.fence).toBeGreaterThan(heldFence);
      await lease.release();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a holder whose session expires gives its permits to the waiter, and its lease says it is lost', async () => {
    const name = unique('expired-holder');
    const holder = await client()
      .semaphore(name, { permits: 2 })
      .acquire({ ...long, permits: 2 });
    const waiting = client().semaphore(name, { permits: 2 }).acquire(long);
    const slots = `${semaphoreFolder(name)}/slots`;
    await eventually(async () => (await listing(slots)).length === 2, 5_000, 'queued');
    const [node] = queueOrder(await listing(slots));
    await expireOwnerOf(`${slots}/${node}`);
    const next = await waiting;
    expect(next.fence).toBeGreaterThan(holder.fence);
    await eventually(async () => holder.signal.aborted, 10_000, 'the expired holder noticed');
    expect(holder.held).toBe(false);
    await next.release();
  });

  it('a semaphore waiter whose predecessor (the head) loses its session is not starved', async () => {
    const name = unique('lost-head');
    const queue = `${semaphoreFolder(name)}/slots`;
    const holder = await client().semaphore(name, { permits: 1 }).acquire(long);
    const head = client()
      .semaphore(name, { permits: 1 })
      .acquire(long)
      .catch((error: unknown) => error);
    await eventually(async () => (await listing(queue)).length === 2, 5_000, 'the head queued');
    const behind = client().semaphore(name, { permits: 1 }).acquire(long);
    await eventually(async () => (await listing(queue)).length === 3, 5_000, 'the second waiter queued');
    const [, headNode] = queueOrder(await listing(queue));
    await expireOwnerOf(`${queue}/${headNode}`);
    await holder.release();
    // The head rejoins at the back on a new session: the waiter that was behind it goes first.
    const next = await behind;
    expect(next.fence).toBeGreaterThan(holder.fence);
    await next.release();
    const late = await head;
    if (late && typeof late === 'object' && 'release' in late)
      await (late as { release(): Promise<void> }).release();
  });

  it('a reader whose writer ahead loses its session watches the writer before that one, and gets in', async () => {
    const name = unique('lost-writer');
    const folder = rwlockFolder(name);
    const first = await client().readWriteLock(name).write(long);
    const second = client()
      .readWriteLock(name)
      .write(long)
      .catch((error: unknown) => error);
    await eventually(async () => (await listing(folder)).length === 2, 5_000, 'the second writer queued');
    const reading = client().readWriteLock(name).read(long);
    await eventually(async () => (await listing(folder)).length === 3, 5_000, 'the reader queued');
    const [, secondNode] = await listing(folder);
    await expireOwnerOf(`${folder}/${secondNode}`);
    await first.release();
    const reader = await reading;
    expect(reader.fence).toBeGreaterThan(first.fence);
    await reader.release();
    const late = await second;
    if (late && typeof late === 'object' && 'release' in late)
      await (late as { release(): Promise<void> }).release();
  });

  it('no herd: each waiter watches only the nearest entries that keep it out, no folder is watched', async () => {
    // Pin every client to one server so its `wchp` sees all the watches.
    const endpoint = cluster.nodes[0]!.directEndpoint;
    const name = unique('herd');
    const slots = `${semaphoreFolder(name)}/slots`;
    const holder = await client({ servers: endpoint })
      .semaphore(name, { permits: 2 })
      .acquire({ ...long, permits: 2 });
    const waiters = Array.from({ length: 4 }, () =>
      client({ servers: endpoint }).semaphore(name, { permits: 2 }),
    );
    const pending: Promise<unknown>[] = [];
    for (const waiter of waiters) {
      const granted = waiter.acquire(long).then(async (lease) => {
        await lease.release();
        return lease.fence;
      });
      pending.push(granted);
      // One at a time, so the queue order is the order of `waiters`.
      await eventually(async () => (await listing(slots)).length === pending.length + 1, 5_000, 'queued');
    }
    // Holder (2 permits), then four waiters of 1: each waiter watches the nearest entries that, with
    // its own permit, ask for more than 2 — the first only the holder, the second the first waiter
    // and the holder, the others their two predecessors. Total 2 + 2 + 2 + 1 watches.
    let watched = new Map<string, number>();
    await eventually(
      async () => {
        watched = await watchesByPath(endpoint);
        const total = [...watched.entries()]
          .filter(([path]) => path.startsWith(`${slots}/`))
          .reduce((sum, [, count]) => sum + count, 0);
        return total === 7;
      },
      5_000,
      'seven watches',
    );
    const order = queueOrder(await listing(slots));
    expect(order).toHaveLength(5);
    expect(order.map((node) => watched.get(`${slots}/${node}`) ?? 0)).toEqual([2, 2, 2, 1, 0]);
    expect(watched.get(slots) ?? 0).toBe(0);
    expect(watched.get(semaphoreFolder(name)) ?? 0).toBe(0);
    await holder.release();
    const fences = await Promise.all(pending);
    expect(new Set(fences).size).toBe(4);
  });

  it('a try that does not fit has deleted its nodes by the time it answers null', async () => {
    const name = unique('try-leaves');
    const folder = semaphoreFolder(name);
    const admin = await connectRaw(servers, 10_000);
    try {
      const list = (path: string) => settle<string[]>((done) => admin.getChildren(path, undefined, done));
      const holder = await client().semaphore(name, { permits: 2 }).acquire(long);
      const other = client().semaphore(name, { permits: 2 });
      for (let round = 0; round < 5; round++) {
        expect(await other.tryAcquire({ ttlMs: 10_000, permits: 2 })).toBeNull();
        expect(await list(folder)).toEqual(['slots']);
        expect(await list(`${folder}/slots`)).toHaveLength(1);
      }
      await holder.release();
    } finally {
      await closeRaw(admin);
    }
  });

  it('releasing a lapsed grant resolves, and leaves the new holder alone', async () => {
    const name = unique('lapsed');
    const old = await client().semaphore(name, { permits: 1 }).acquire({ ttlMs: 500, waitMs: 5_000 });
    const next = await client().semaphore(name, { permits: 1 }).acquire(long);
    expect(old.held).toBe(false);
    await old.release();
    expect(next.held).toBe(true);
    expect(await client().semaphore(name, { permits: 1 }).tryAcquire({ ttlMs: 10_000 })).toBeNull();
    await next.release();
  });

  it('close() of a waiter leaves no node behind', async () => {
    const name = unique('close-head');
    const folder = semaphoreFolder(name);
    const holder = await client().semaphore(name, { permits: 1 }).acquire(long);
    const waiterClient = client();
    const waiting = waiterClient
      .semaphore(name, { permits: 1 })
      .acquire(long)
      .catch((error: unknown) => error);
    await eventually(async () => (await listing(`${folder}/slots`)).length === 2, 5_000, 'the waiter queued');
    await waiterClient.close();
    expect(((await waiting) as { code?: string }).code).toBe('closed');
    expect(await listing(`${folder}/slots`)).toHaveLength(1);
    await holder.release();
    expect(await listing(`${folder}/slots`)).toEqual([]);
  });
});
