import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { sleep } from './abort.js';
import { monotonicNow } from './clock.js';
import { isFencekitError } from './errors.js';
import { MemoryFencedResource } from './fenced-resource.js';
import { createMemoryLockClient } from './memory-lock-client.js';
import { MemoryLockServer } from './memory-lock-server.js';
import { withLock } from './with-lock.js';

/** What the demo found; `staleWriteRefused` is the point of the exercise. */
export interface DemoOutcome {
  staleWriteRefused: boolean;
  finalStock: number;
  finalFence: bigint;
}

/**
 * The fencing story in one process: buyer A takes the lock for the last item, pauses (a GC pause,
 * a frozen VM) past its lease, buyer B takes over and sells the item, then A wakes and tries to
 * write. The lock alone cannot stop A; the fenced store refuses A's stale token.
 *
 * Run it: `node packages/core/dist/demo.js`.
 */
export async function runDemo(log: (line: string) => void = console.log): Promise<DemoOutcome> {
  const started = monotonicNow();
  const say = (line: string) => log(`[${(monotonicNow() - started).toFixed(0).padStart(4)} ms] ${line}`);
  const server = new MemoryLockServer();
  const buyerA = createMemoryLockClient({ server, name: 'buyer A' });
  const buyerB = createMemoryLockClient({ server, name: 'buyer B' });
  const store = new MemoryFencedResource<number>();
  const sku = 'inventory:sku-42';
  const ttlMs = 300;
  let staleWriteRefused = false;
  try {
    await store.write(sku, 1, 0n);
    say(`store: ${sku} has 1 item left (fence 0)`);

    const leaseA = await buyerA.acquire(sku, { ttlMs });
    say(`buyer A: acquired the lock with fence ${leaseA.fence}, ttl ${ttlMs} ms`);
    const seenByA = (await store.read(sku))?.value ?? 0;
    say(`buyer A: reads stock = ${seenByA}, then pauses (think: a long GC pause) without extending`);
    leaseA.signal.addEventListener('abort', () =>
      say(`buyer A's lease.signal: ${String(leaseA.signal.reason)}`),
    );

    const waitingB = withLock(
      buyerB,
      sku,
      async (leaseB) => {
        say(`buyer B: acquired the lock after A's lease expired, fence ${leaseB.fence}`);
        const stock = (await store.read(sku))?.value ?? 0;
        await store.write(sku, stock - 1, leaseB.fence);
        say(`buyer B: sold the last item, wrote stock = ${stock - 1} with fence ${leaseB.fence}: accepted`);
      },
      { ttlMs: 1_000, waitMs: 5_000 },
    );

    await sleep(ttlMs * 2);
    await waitingB;
    say(`buyer A: wakes up and writes without checking its lease (lease.held is now ${leaseA.held})`);
    try {
      await store.write(sku, seenByA - 1, leaseA.fence);
      say(
        `buyer A: wrote stock = ${seenByA - 1} with fence ${leaseA.fence}: ACCEPTED — the item was sold twice`,
      );
    } catch (error) {
      if (!isFencekitError(error, 'stale-fence')) throw error;
      staleWriteRefused = true;
      say(`buyer A: write with fence ${leaseA.fence} REFUSED by the store: ${error.message}`);
    }
    try {
      await leaseA.release();
      say('buyer A: release is a no-op: its grant had already expired on the server');
    } catch (error) {
      say(`buyer A: release refused: ${(error as Error).message}`);
    }
    const final = await store.read(sku);
    say(`store: ${sku} = ${final?.value} (fence ${final?.fence}); the stale holder changed nothing`);
    return { staleWriteRefused, finalStock: final?.value ?? Number.NaN, finalFence: final?.fence ?? -1n };
  } finally {
    await Promise.all([buyerA.close(), buyerB.close()]);
  }
}

/** True when this file is the script node was started with (not imported). */
function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  return import.meta.url === pathToFileURL(realpathSync(script)).href;
}

if (isMain()) {
  runDemo().then(
    (outcome) => {
      process.exitCode = outcome.staleWriteRefused ? 0 : 1;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
