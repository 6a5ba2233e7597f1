// The README example, run by test/readme-example.test.ts. Run it: node packages/core/examples/quick-start.mjs
import { createMemoryLockClient, MemoryFencedResource, StaleFenceError, withLock } from '@fencekit/core';

const locks = createMemoryLockClient();
const stock = new MemoryFencedResource();
await stock.write('sku-42', 10, 0n);

// Two sales, one at a time; each write carries its lease's fence (1, then 2).
for (const buyer of ['alice', 'bob']) {
  await withLock(
    locks,
    'inventory:sku-42',
    async (lease, signal) => {
      const left = (await stock.read('sku-42'))?.value ?? 0;
      signal.throwIfAborted(); // stop if the lease is about to be lost
      await stock.write('sku-42', left - 1, lease.fence);
      console.log(`${buyer} bought one with fence ${lease.fence}`);
    },
    { ttlMs: 2_000 },
  );
}

// A holder that paused past its lease comes back with an old fence: the store refuses it.
try {
  await stock.write('sku-42', 0, 1n);
} catch (error) {
  if (!(error instanceof StaleFenceError)) throw error;
  console.log(`refused: ${error.message}`);
}
console.log(await stock.read('sku-42')); // { value: 8, fence: 2n }
await locks.close();
