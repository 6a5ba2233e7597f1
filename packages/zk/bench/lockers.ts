import type { BenchLocker, Unlock } from '@fencekit/core/bench';
import { ZkLockClient } from '@fencekit/zk';
import type { Client } from 'node-zookeeper-client';
import { closeRaw, connectRaw, EPHEMERAL_SEQUENTIAL, settle } from './raw.js';

const NODE_DELETED = 2;

/**
 * The floor's handoff: the textbook ZooKeeper lock on the bare library (ephemeral-sequential node,
 * watch the predecessor, granted when it is deleted and we were second), with nothing else — no
 * fence read, no protected name, no timeouts. Its handoff is the least any ZooKeeper lock can do:
 * the holder's delete plus the watch notification.
 */
export class FloorLocker implements BenchLocker {
  readonly #folders = new Set<string>();

  private constructor(private readonly client: Client) {}

  static async open(servers: string): Promise<FloorLocker> {
    return new FloorLocker(await connectRaw(servers));
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
      const children = await settle<string[]>((done) => client.getChildren(folder, undefined, done));
      const order = children.sort();
      const index = order.indexOf(name);
      if (index <= 0) break;
      let deleted: () => void = () => {};
      const gone = new Promise<void>((resolve) => {
        deleted = resolve;
      });
      const stat = await settle((done) =>
        client.exists(
          `${folder}/${order[index - 1]}`,
          (event) => event.type === NODE_DELETED && deleted(),
          done,
        ),
      );
      if (stat === null) continue;
      await gone;
      if (index === 1) break;
    }
    return () => settle<void>((done) => client.remove(path, -1, (error) => done(error, undefined)));
  }

  close(): Promise<void> {
    return closeRaw(this.client);
  }
}

/** fencekit's lock as the contended ring drives it. */
export class FencekitLocker implements BenchLocker {
  readonly client: ZkLockClient;

  constructor(servers: string) {
    this.client = new ZkLockClient({ servers, sessionTimeoutMs: 30_000 });
  }

  async lock(resource: string): Promise<Unlock> {
    const lease = await this.client.acquire(resource, { ttlMs: 30_000, waitMs: 30_000 });
    return () => lease.release();
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
