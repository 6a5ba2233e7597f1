// Run after `npx tsc -b packages/redis`:  node packages/redis/examples/quickstart.mjs redis://127.0.0.1:6379
import { MemoryFencedResource } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';

const locks = new RedisLockClient({ connection: process.argv[2] ?? 'redis://127.0.0.1:6379' });
const stock = new MemoryFencedResource(); // stands in for your database, which checks the fence
await stock.write('sku-42', 1, 0n);

try {
  // Waits (queued, woken on release, at most 5 s) for the lock; it expires 10 s after the request.
  const lease = await locks.acquire('inventory:sku-42', { ttlMs: 10_000, waitMs: 5_000 });
  try {
    const current = await stock.read('sku-42');
    // The write carries the fence: a holder that paused past its lease gets StaleFenceError here.
    await stock.write('sku-42', (current?.value ?? 0) - 1, lease.fence);
    console.log(
      `sold one, fence ${lease.fence}, lease valid for ${Math.round(lease.validUntil - performance.now())} ms`,
    );
  } finally {
    await lease.release();
  }
} finally {
  await locks.close();
}
