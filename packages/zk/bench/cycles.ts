import { randomUUID } from 'node:crypto';
import { ZkLockClient } from '@fencekit/zk';
import { closeRaw, connectRaw, EPHEMERAL, settle } from './raw.js';

export interface Cycle {
  /** Run one cycle (e.g. acquire + release); resolves when it is done. */
  once(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The floor: the least a ZooKeeper lock can cost, one create of an ephemeral node and one delete,
 * sent with the bare library (no wrapper of ours).
 */
export async function floorCycle(servers: string): Promise<Cycle> {
  const client = await connectRaw(servers);
  const folder = `/fencekit-bench/floor-${randomUUID()}`;
  await settle<string>((done) => client.mkdirp(folder, done));
  const path = `${folder}/lock`;
  return {
    async once() {
      await settle<string>((done) => client.create(path, null, EPHEMERAL, done));
      await settle<void>((done) => client.remove(path, -1, (error) => done(error, undefined)));
    },
    close: () => closeRaw(client),
  };
}

/** fencekit's lock: acquire (protected ephemeral-sequential node, fence) + release. */
export async function lockCycle(servers: string): Promise<Cycle> {
  const client = new ZkLockClient({ servers, sessionTimeoutMs: 30_000 });
  const resource = `bench/uncontended/${randomUUID()}`;
  return {
    async once() {
      const lease = await client.acquire(resource, { ttlMs: 30_000 });
      await lease.release();
    },
    close: () => client.close(),
  };
}

/** One round trip to the server a session is connected to: a read of "/", bare library. */
export async function roundTripCycle(servers: string): Promise<Cycle> {
  const client = await connectRaw(servers);
  return {
    async once() {
      await settle((done) => client.exists('/', undefined, done));
    },
    close: () => closeRaw(client),
  };
}
