import type { BenchLocker, Unlock } from '@fencekit/core/bench';
import { ZkSharedLockClient } from '@fencekit/zk';
import type { Client } from 'node-zookeeper-client';
import { closeRaw, connectRaw, EPHEMERAL_SEQUENTIAL, settle } from './raw.js';

/**
 * The floor of a permit hand-off on ZooKeeper, on the bare library: what a Curator-style semaphore
 * needs at the least — one ephemeral-sequential create, a getChildren that leaves a children watch,
 * granted while fewer than `permits` nodes sort ahead, otherwise wait for the watch to fire and list
 * again. A release is one delete. No lock around the lease node (Curator's V2 takes one), no fence,
 * no timeouts, no validity: the hand-off is the holder's delete, the watch notification and one
 * getChildren. Watching the whole folder (not one node ahead) because holders release in any order:
 * a waiter watching a single node would sleep through the release that freed its permit.
 */
export class SemaphoreFloorLocker implements BenchLocker {
  readonly #folders = new Set<string>();

  private constructor(
    private readonly client: Client,
    private readonly permits: number,
  ) {}

  static async open(servers: string, permits: number): Promise<SemaphoreFloorLocker> {
    return new SemaphoreFloorLocker(await connectRaw(servers), permits);
  }

  async lock(folder: string): Promise<Unlock> {
    const { client } = this;
    if (!this.#folders.has(folder)) {
      await settle<string>((done) => client.mkdirp(folder, done));
      this.#folders.add(folder);
    }
    const path = await settle<string>((done) =>
      client.create(`${folder}/n-`, null, EPHEMERAL_SEQUENTIAL, done),
    );
    const name = path.slice(folder.length + 1);
    for (;;) {
      let changed: () => void = () => {};
      const fired = new Promise<void>((resolve) => {
        changed = resolve;
      });
      const children = await settle<string[]>((done) => client.getChildren(folder, () => changed(), done));
      if (children.filter((child) => child < name).length < this.permits) break;
      await fired;
    }
    return () => settle<void>((done) => client.remove(path, -1, (error) => done(error, undefined)));
  }

  close(): Promise<void> {
    return closeRaw(this.client);
  }
}

/** fencekit's semaphore (ZkSharedLockClient) as the contended ring drives it, one session each. */
export class SemaphoreFencekitLocker implements BenchLocker {
  readonly client: ZkSharedLockClient;

  constructor(
    servers: string,
    private readonly permits: number,
  ) {
    this.client = new ZkSharedLockClient({ servers, sessionTimeoutMs: 30_000 });
  }

  async lock(resource: string): Promise<Unlock> {
    const lease = await this.client
      .semaphore(resource, { permits: this.permits })
      .acquire({ ttlMs: 30_000, waitMs: 30_000 });
    return () => lease.release();
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
