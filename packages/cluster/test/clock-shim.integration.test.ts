import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { dockerAvailable, type ProviderName } from '@fencekit/cluster';
import { sleep } from '@fencekit/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clockShimPath, writeClockSkew } from '../src/native.js';
import { withRedis } from './support/clients.js';
import { withCluster } from './support/cluster-scope.js';
import { longestGap, SleepingJvm } from './support/ticks.js';

/**
 * The clock shim's effects end with the fault: timed waits follow the skewed clock in real time (a JVM sleeping
 * 250 ms sleeps 250 ms of the server's clock), and a heal never sends a monotonic clock backwards.
 */
describe('clock shim: JVM timed waits', () => {
  let dir: string;
  let jvm: SleepingJvm | undefined;
  beforeEach(() => {
    dir = mkdtempSync('/dev/shm/fencekit-shim-test-');
    writeClockSkew(join(dir, 'clock'), 0, 1);
  });
  afterEach(async () => {
    await jvm?.stop();
    jvm = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const startJvm = async () => {
    const shim = clockShimPath();
    expect(shim, 'the clock shim must build (gcc)').toBeDefined();
    jvm = new SleepingJvm(shim!, join(dir, 'clock'));
    await jvm.waitForTicks(3, 60_000);
    return jvm;
  };

  it('Thread.sleep(250) keeps waking every ~250 ms through a +5 s jump and its heal 2 s later', async () => {
    const sleeper = await startJvm();
    const jumped = performance.now();
    writeClockSkew(join(dir, 'clock'), 5_000, 1);
    await sleep(2_000);
    writeClockSkew(join(dir, 'clock'), 0, 1);
    const healed = performance.now();
    await sleep(2_000);
    const now = performance.now();
    // Before the fix the first sleep begun under the jump lasted 5.25 s (its deadline was read as real time).
    expect(longestGap(jumped, sleeper.between(jumped, now), now)).toBeLessThan(1_500);
    expect(sleeper.between(healed, now).length).toBeGreaterThanOrEqual(4);
  }, 90_000);

  it('a 3x drift makes the JVM wake faster (~83 ms), not slower', async () => {
    const sleeper = await startJvm();
    writeClockSkew(join(dir, 'clock'), 0, 3);
    await sleep(200); // the sleep in progress at the change was armed before it
    const from = performance.now();
    await sleep(2_000);
    const during = sleeper.between(from, performance.now()).length;
    writeClockSkew(join(dir, 'clock'), 0, 1);
    // 24 at 3x in 2 s, 8 at 1x; before the fix the drift stretched each wait, giving fewer than 8.
    expect(during).toBeGreaterThanOrEqual(13);
  }, 90_000);
});

/** Redis' active expiry runs from its cron timer, armed on CLOCK_MONOTONIC. */
function redisExpiryAfterHeal(provider: ProviderName): void {
  it('keys set after healing a +10 s jump expire on time (the monotonic clock did not step back)', () =>
    withCluster({ topology: 'redis', provider }, async (cluster) => {
      await cluster.faults.clock('n1', { offsetMs: 10_000 });
      await sleep(300);
      await cluster.faults.heal();
      await withRedis(cluster.endpoints[0]!, {}, async (redis) => {
        const pipeline = redis.pipeline();
        for (let i = 0; i < 200; i++) pipeline.set(`short:${i}`, '1', 'PX', 300);
        await pipeline.exec();
        // DBSIZE counts keys without touching them: only active expiry (the cron) removes them.
        let left = await redis.dbsize();
        for (let i = 0; i < 40 && left > 0; i++) {
          await sleep(100);
          left = await redis.dbsize();
        }
        // Before the fix the cron stalled until real time caught up: all 200 still there ~10 s later.
        expect(left).toBe(0);
      });
    }));
}

describe('clock shim: local Redis', () => redisExpiryAfterHeal('local'));
const engine = await dockerAvailable();
if (!engine)
  console.warn('[cluster] docker clock shim tests SKIPPED: no Docker engine answers `docker info`');
describe.skipIf(!engine)(`clock shim: docker Redis${engine ? '' : ' (skipped: no engine)'}`, () =>
  redisExpiryAfterHeal('docker'),
);
