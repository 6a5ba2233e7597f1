import type { Fence, ReadWriteLockClient, SemaphoreClient } from '@fencekit/core';
import type { BackendName, ClientBackend, ConnectOptions } from './types.js';

/** A backend's semaphores and read-write locks (issue #19), as the `semaphore` and `rwlock` workloads use them. */
export type SharedLocks = SemaphoreClient<Fence | undefined> & ReadWriteLockClient<Fence | undefined>;

/** A client backend that also offers shared locks (closed with it). */
export interface SharedLockBackend extends ClientBackend {
  readonly sharedLocks: SharedLocks;
}

/**
 * The extension point for shared locks: backend name → how a client process opens its shared-lock
 * client, loaded on demand like the backend registry (index.ts). A backend whose adapter offers
 * semaphores and read-write locks is one entry here: its shared-lock client built from the same
 * `ConnectOptions` as its `connect`; runs of the `semaphore` and `rwlock` workloads on a
 * backend without an entry are refused before anything starts (run/compatibility.ts).
 */
const connectors: Partial<Record<BackendName, (options: ConnectOptions) => Promise<SharedLocks>>> = {
  memory: async ({ endpoints }) =>
    (await import('./remote-shared-lock.js')).RemoteSharedLockClient.connect(endpoints[0]!),
  redis: async ({ endpoints, namespace }) => {
    const { RedisSharedLockClient } = await import('@fencekit/redis');
    return new RedisSharedLockClient({ connection: `redis://${endpoints[0]}`, keyPrefix: `${namespace}:` });
  },
  // A session of its own, set as the zk backend sets its lock client's (zk.ts).
  zk: async ({ endpoints, namespace, ttlMs, sessionMs }) => {
    const [{ ZkSharedLockClient }, { ZOOKEEPER_FOLLOWER_LAG_MS }, { zkSessionMs }] = await Promise.all([
      import('@fencekit/zk'),
      import('@fencekit/cluster'),
      import('./zk.js'),
    ]);
    return new ZkSharedLockClient({
      servers: endpoints,
      sessionTimeoutMs: sessionMs ?? zkSessionMs(ttlMs),
      followerLagMs: ZOOKEEPER_FOLLOWER_LAG_MS,
      root: `/${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    });
  },
  etcd: async ({ endpoints, namespace }) => {
    const { EtcdSharedLockClient } = await import('@fencekit/etcd');
    return new EtcdSharedLockClient({ hosts: endpoints, prefix: namespace });
  },
};

/** The backends whose shared locks the harness can drive. */
export function sharedLockBackends(): BackendName[] {
  return Object.keys(connectors) as BackendName[];
}

/** Opens `backend`'s shared-lock client beside `connected`; closing the result closes both. */
export async function withSharedLocks(
  backend: BackendName,
  connected: ClientBackend,
  options: ConnectOptions,
): Promise<SharedLockBackend> {
  const connect = connectors[backend];
  if (connect === undefined) {
    throw new Error(`the ${backend} backend offers no semaphores or read-write locks to the harness`);
  }
  const sharedLocks = await connect(options);
  return {
    ...connected,
    sharedLocks,
    async close() {
      const results = await Promise.allSettled([sharedLocks.close(), connected.close()]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
