import { EtcdClient } from '@fencekit/etcd';
import { CompareResult, CompareTarget, Etcd3, EtcdLockFailedError } from 'etcd3';

/** One way of taking a lock on etcd, as the benchmark drives it. */
export interface Locker {
  /** Resolves holding the lock; the returned function gives it back. */
  lock(resource: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface Contender {
  readonly name: string;
  open(endpoints: readonly string[]): Locker;
}

const hostsOf = (endpoints: readonly string[]) => endpoints.map((e) => `http://${e}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** @fencekit/etcd: one Txn to join the queue (granted at once when free), one Txn to leave. */
export const fencekit: Contender = {
  name: '@fencekit/etcd acquire + release',
  open(endpoints) {
    const client = new EtcdClient({ hosts: [...endpoints], prefix: 'bench-fencekit' });
    return {
      async lock(resource) {
        const lease = await client.acquire(resource, { ttlMs: 10_000, waitMs: 60_000 });
        return () => lease.release();
      },
      close: () => client.close(),
    };
  },
};

/** @fencekit/etcd with `keepAlive: false`: a lease grant per acquire, the lease revoked after release. */
export const fencekitPerGrant: Contender = {
  name: '@fencekit/etcd keepAlive: false',
  open(endpoints) {
    const client = new EtcdClient({
      hosts: [...endpoints],
      prefix: 'bench-fencekit-pergrant',
      keepAlive: false,
    });
    return {
      async lock(resource) {
        const lease = await client.acquire(resource, { ttlMs: 10_000, waitMs: 60_000 });
        return () => lease.release();
      },
      close: () => client.close(),
    };
  },
};

/**
 * The floor: the least any etcd lock can do — one Txn "put if absent", one delete. Waiters watch the
 * key and retry the Txn when it is deleted (every waiter races: no queue, no lease, no fence check).
 */
export const floor: Contender = {
  name: 'floor: Txn put-if-absent + delete',
  open(endpoints) {
    const etcd = new Etcd3({ hosts: hostsOf(endpoints) });
    return {
      async lock(resource) {
        const key = Buffer.from(`bench-floor/${resource}`);
        for (;;) {
          const response = await etcd.kv.txn({
            compare: [{ key, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0 }],
            success: [{ request_put: { key, value: Buffer.from('x') } }],
            failure: [],
          });
          if (response.succeeded) break;
          await untilDeleted(etcd, key, BigInt(response.header.revision));
        }
        return async () => {
          await etcd.kv.deleteRange({ key });
        };
      },
      async close() {
        etcd.close();
      },
    };
  },
};

async function untilDeleted(etcd: Etcd3, key: Buffer, asOf: bigint): Promise<void> {
  const watcher = etcd
    .watch()
    .key(key)
    .startRevision((asOf + 1n).toString())
    .watcher();
  try {
    await new Promise<void>((resolve) => {
      watcher.on('delete', () => resolve());
      watcher.on('error', () => resolve());
    });
  } finally {
    void watcher.cancel().catch(() => {});
  }
}

/**
 * etcd3's own `Lock`: a fresh lease per acquire, one try (EtcdLockFailedError when held), release
 * revokes the lease. It cannot wait, so waiters poll with a 5–15 ms jittered pause, as its users must.
 */
export const etcd3Lock: Contender = {
  name: "etcd3's Lock (acquire + release)",
  open(endpoints) {
    const etcd = new Etcd3({ hosts: hostsOf(endpoints) });
    return {
      async lock(resource) {
        for (;;) {
          const lock = etcd.lock(`bench-etcd3/${resource}`).ttl(10);
          try {
            await lock.acquire();
            return async () => {
              await lock.release();
            };
          } catch (error) {
            if (!(error instanceof EtcdLockFailedError)) throw error;
            await sleep(5 + Math.random() * 10);
          }
        }
      },
      async close() {
        etcd.close();
      },
    };
  },
};
