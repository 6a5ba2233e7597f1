// A semaphore and a read-write lock against a running ZooKeeper ensemble.
//   ZK_SERVERS=127.0.0.1:2181 node packages/zk/examples/shared.mjs
import { ZkSharedLockClient } from '@fencekit/zk';

const servers = process.env.ZK_SERVERS ?? '127.0.0.1:2181';
const client = new ZkSharedLockClient({ servers, sessionTimeoutMs: 30_000 });

try {
  // 1. At most 4 at a time: strict FIFO; a grant may take several permits.
  const slots = client.semaphore('db-connections', { permits: 4 });
  const one = await slots.acquire({ ttlMs: 10_000, waitMs: 10_000 });
  const two = await slots.acquire({ ttlMs: 10_000, waitMs: 10_000, permits: 2 });
  const none = await slots.tryAcquire({ ttlMs: 10_000, permits: 2 }); // only 1 left
  console.log(`semaphore: fences ${one.fence} < ${two.fence}; a third grant of 2: ${none}`);
  await one.release();
  await two.release();

  // 2. Many readers or one writer; write fences strictly increase, a reader's is above every writer before it.
  const catalog = client.readWriteLock('catalog');
  const readers = [await catalog.read({ ttlMs: 5_000 }), await catalog.read({ ttlMs: 5_000 })];
  console.log(`two readers at once; a writer now: ${await catalog.tryWrite({ ttlMs: 5_000 })}`);
  for (const reader of readers) await reader.release();
  const writer = await catalog.write({ ttlMs: 5_000, waitMs: 10_000 });
  try {
    console.log(`writer fence ${writer.fence} > reader fences ${readers.map((r) => r.fence).join(', ')}`);
    await writer.upgrade().catch((error) => console.log(`upgrade: ${error.code}`)); // unsupported
  } finally {
    await writer.release(); // or `await using writer = …` where your runtime has it
  }
} finally {
  await client.close();
}
