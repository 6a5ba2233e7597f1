import { randomUUID } from 'node:crypto';
import { ZkLockClient, ZkSession } from '@fencekit/zk';
import type { Cycle } from './workloads.js';

const EPHEMERAL = 1;

/** The floor: the least a ZooKeeper lock can cost, one create of an ephemeral node and one delete. */
export async function floorCycle(servers: string): Promise<Cycle> {
  const session = new ZkSession({ servers, sessionTimeoutMs: 10_000 });
  const folder = `/fencekit-bench/floor-${randomUUID()}`;
  await session.mkdirp(folder);
  const path = `${folder}/lock`;
  return {
    async once() {
      await session.create(path, null, EPHEMERAL);
      await session.remove(path);
    },
    close: () => session.close(),
  };
}

/** fencekit's lock: acquire (protected ephemeral-sequential node, fence) + release. */
export async function lockCycle(servers: string): Promise<Cycle> {
  const client = new ZkLockClient({ servers, sessionTimeoutMs: 10_000 });
  const resource = `bench/uncontended/${randomUUID()}`;
  return {
    async once() {
      const lease = await client.acquire(resource, { ttlMs: 30_000 });
      await lease.release();
    },
    close: () => client.close(),
  };
}

/** One round trip to the server a session is connected to: a read of "/". */
export async function roundTripCycle(servers: string): Promise<Cycle> {
  const session = new ZkSession({ servers, sessionTimeoutMs: 10_000 });
  await session.ready();
  return {
    async once() {
      await session.exists('/');
    },
    close: () => session.close(),
  };
}
