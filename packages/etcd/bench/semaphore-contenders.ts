import { randomUUID } from 'node:crypto';
import { EtcdSharedLockClient } from '@fencekit/etcd';
import { Etcd3, type Watcher } from 'etcd3';
import type { Locker } from './contenders.js';

const hostsOf = (endpoints: readonly string[]) => endpoints.map((e) => `http://${e}`);

/** One semaphore (or its floor) in the issue #19 ring: `open` gives one client of `permits`. */
export interface SemaphoreContender {
  readonly name: string;
  open(endpoints: readonly string[], permits: number): Locker;
}

/**
 * The floor of a permit hand-off on etcd, on the bare `etcd3` client: one put under the semaphore's
 * prefix, one range of the prefix (granted while fewer than `permits` keys were created before
 * ours), otherwise wait for a delete under the prefix newer than that range and range again. A
 * release is one delete. The watch on the prefix is opened once per client and kept, so a hand-off
 * is the holder's delete, the watch event's delivery and one range — no lease, no queue order check
 * beyond the count, no fence, no timeouts.
 */
export const semaphoreFloor: SemaphoreContender = {
  name: 'floor: bare put + range + prefix watch',
  open(endpoints, permits) {
    const etcd = new Etcd3({ hosts: hostsOf(endpoints) });
    const watches = new Map<
      string,
      { watcher: Promise<Watcher>; latestDelete: bigint; wake: Set<() => void> }
    >();
    const watchOf = (prefix: string) => {
      let watch = watches.get(prefix);
      if (watch === undefined) {
        const entry = {
          watcher: etcd.watch().prefix(prefix).create(),
          latestDelete: 0n,
          wake: new Set<() => void>(),
        };
        void entry.watcher.then((w) =>
          w.on('delete', (kv) => {
            const revision = BigInt(kv.mod_revision);
            if (revision > entry.latestDelete) entry.latestDelete = revision;
            for (const wake of entry.wake) wake();
          }),
        );
        watches.set(prefix, entry);
        watch = entry;
      }
      return watch;
    };
    return {
      async lock(resource) {
        const prefix = `bench-sem-floor/${resource}/`;
        const watch = watchOf(prefix);
        // Watching before our put: every delete after it is then seen.
        await watch.watcher;
        const key = `${prefix}${randomUUID()}`;
        const put = await etcd.put(key).value('x').exec();
        const mine = BigInt(put.header.revision);
        for (;;) {
          const range = await etcd.getAll().prefix(prefix).exec();
          const ahead = range.kvs.filter((kv) => BigInt(kv.create_revision) < mine).length;
          if (ahead < permits) break;
          const asOf = BigInt(range.header.revision);
          if (watch.latestDelete <= asOf) {
            await new Promise<void>((resolve) => {
              const wake = () => {
                if (watch.latestDelete > asOf) {
                  watch.wake.delete(wake);
                  resolve();
                }
              };
              watch.wake.add(wake);
            });
          }
        }
        return async () => {
          await etcd.delete().key(key).exec();
        };
      },
      async close() {
        await Promise.all([...watches.values()].map(async (w) => (await w.watcher).cancel().catch(() => {})));
        etcd.close();
      },
    };
  },
};

/** fencekit's semaphore (EtcdSharedLockClient), one client (own connections) each. */
export const fencekitSemaphore: SemaphoreContender = {
  name: 'fencekit EtcdSharedLockClient semaphore',
  open(endpoints, permits) {
    const client = new EtcdSharedLockClient({ hosts: [...endpoints], prefix: 'bench-sem-fencekit' });
    return {
      async lock(resource) {
        const lease = await client
          .semaphore(resource, { permits })
          .acquire({ ttlMs: 10_000, waitMs: 60_000 });
        return () => lease.release();
      },
      close: () => client.close(),
    };
  },
};
