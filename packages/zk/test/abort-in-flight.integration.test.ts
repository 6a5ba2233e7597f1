import { injectCluster } from '@fencekit/cluster/vitest';
import type { ZkSession } from '@fencekit/zk';
import { ZkLockClient, ZkSharedLockClient } from '@fencekit/zk';
import { afterEach, describe, expect, it } from 'vitest';
import { segmentFor } from '../src/paths.js';
import { followerLagMs } from './support/ensemble.js';

// An acquire given up while the create of its node is on the wire: the node is created all the same,
// and lives as long as the client's session. These tests abort right after the create was sent (the
// acquire sends it synchronously once the session is connected) and check that the node is withdrawn
// while the client stays open, so that another client is granted without waiting for that close().

const cluster = injectCluster('zookeeper');
const servers = cluster.endpoints.join(',');
const sessionTimeoutMs = 4_000;

const opened: { close(): Promise<void> }[] = [];
function lockClient(): ZkLockClient {
  const c = new ZkLockClient({ servers, sessionTimeoutMs, followerLagMs });
  opened.push(c);
  return c;
}
function sharedClient(): ZkSharedLockClient {
  const c = new ZkSharedLockClient({ servers, sessionTimeoutMs, followerLagMs });
  opened.push(c);
  return c;
}
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((c) => c.close()));
});

function unique(label: string): string {
  return `abort-in-flight-${label}/${Math.random().toString(36).slice(2)}`;
}

/**
 * Makes `a`'s next acquire send its create at once: the session connected, the folders there (a first
 * create in a missing folder fails, and the acquire would create the folder before its node).
 */
async function warmed(take: () => Promise<{ release(): Promise<void> }>): Promise<void> {
  await (await take()).release();
}

async function childrenOf(session: ZkSession, folder: string): Promise<string[]> {
  try {
    return (await session.children(folder)).children;
  } catch {
    return [];
  }
}

/** Resolves once `folder` has no children, polling for at most `withinMs`. */
async function emptied(session: ZkSession, folder: string, withinMs: number): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  let left = await childrenOf(session, folder);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    left = await childrenOf(session, folder);
  }
  return left;
}

/** Aborts `controller` right after the create of a node under a folder ending in `suffix` is sent. */
function abortAfterCreate(session: ZkSession, suffix: string, controller: AbortController): void {
  const create = session.createWithStat.bind(session);
  session.createWithStat = (path, data, mode, options) => {
    const sent = create(path, data, mode, options);
    if (path.slice(0, path.lastIndexOf('/')).endsWith(suffix)) controller.abort(new Error('caller stopped'));
    return sent;
  };
}

const codeOf = (error: unknown) => (error as { code?: string }).code;

describe('an acquire aborted while its create is in flight leaves no node behind', () => {
  it('mutex: the next client is granted while the aborted one stays open', async () => {
    const [a, b] = [lockClient(), lockClient()];
    const resource = unique('mutex');
    await warmed(() => a.acquire(resource, { ttlMs: 10_000 }));
    const controller = new AbortController();
    const pending = a.acquire(resource, { ttlMs: 10_000, waitMs: 10_000, signal: controller.signal });
    controller.abort(new Error('caller stopped'));
    expect(codeOf(await pending.catch((e: unknown) => e))).toBe('aborted');
    // Before the fix the aborted create's node headed the queue until `a` closed: a timeout here.
    const lease = await b.acquire(resource, { ttlMs: 10_000, waitMs: 3_000 });
    await lease.release();
    expect(await emptied(b.session, a.folderOf(resource), 3_000)).toEqual([]);
  });

  it('semaphore: a slot node whose create was in flight is withdrawn', async () => {
    const [a, b] = [sharedClient(), sharedClient()];
    const name = unique('sem-queue');
    await warmed(() => a.semaphore(name, { permits: 2 }).acquire({ permits: 1, ttlMs: 10_000 }));
    const controller = new AbortController();
    const pending = a
      .semaphore(name, { permits: 2 })
      .acquire({ permits: 2, ttlMs: 10_000, waitMs: 10_000, signal: controller.signal });
    controller.abort(new Error('caller stopped'));
    expect(codeOf(await pending.catch((e: unknown) => e))).toBe('aborted');
    const lease = await b
      .semaphore(name, { permits: 2 })
      .acquire({ permits: 2, ttlMs: 10_000, waitMs: 3_000 });
    await lease.release();
    const folder = `/fencekit/semaphores/${segmentFor(name)}`;
    expect(await emptied(b.session, `${folder}/slots`, 3_000)).toEqual([]);
  });

  it('semaphore: a slot node whose create was in flight (caught at the create) is withdrawn and holds no permits', async () => {
    const [a, b] = [sharedClient(), sharedClient()];
    const name = unique('sem-lease');
    await warmed(() => a.semaphore(name, { permits: 2 }).acquire({ permits: 1, ttlMs: 10_000 }));
    const controller = new AbortController();
    abortAfterCreate(a.session, '/slots', controller);
    const pending = a
      .semaphore(name, { permits: 2 })
      .acquire({ permits: 2, ttlMs: 10_000, waitMs: 10_000, signal: controller.signal });
    expect(codeOf(await pending.catch((e: unknown) => e))).toBe('aborted');
    // Before the fix the lease node kept both permits for nobody until `a` closed.
    const lease = await b
      .semaphore(name, { permits: 2 })
      .acquire({ permits: 1, ttlMs: 10_000, waitMs: 3_000 });
    await lease.release();
    const folder = `/fencekit/semaphores/${segmentFor(name)}`;
    expect(await emptied(b.session, `${folder}/slots`, 3_000)).toEqual([]);
  });

  it.each(['read', 'write'] as const)(
    'rwlock %s: the entry whose create was in flight is withdrawn',
    async (mode) => {
      const [a, b] = [sharedClient(), sharedClient()];
      const name = unique(`rw-${mode}`);
      await warmed(() => a.readWriteLock(name).write({ ttlMs: 10_000 }));
      const controller = new AbortController();
      const pending = a
        .readWriteLock(name)
        [mode]({ ttlMs: 10_000, waitMs: 10_000, signal: controller.signal });
      controller.abort(new Error('caller stopped'));
      expect(codeOf(await pending.catch((e: unknown) => e))).toBe('aborted');
      // A writer waits for every entry ahead of it, a reader's too.
      const lease = await b.readWriteLock(name).write({ ttlMs: 10_000, waitMs: 3_000 });
      await lease.release();
      expect(await emptied(b.session, `/fencekit/rwlocks/${segmentFor(name)}`, 3_000)).toEqual([]);
    },
  );
});
