// Run after `npx tsc -b packages/redlock`:
//   node packages/redlock/examples/quickstart.mjs 127.0.0.1:6379 127.0.0.1:6380 127.0.0.1:6381
import { RedlockClient } from '@fencekit/redlock';

const endpoints = process.argv.slice(2);
const locks = new RedlockClient({
  nodes: (endpoints.length > 0 ? endpoints : ['127.0.0.1:6379']).map((e) => `redis://${e}`),
});

try {
  // A cron tick: whoever gets the lock runs the job; the others give up at once (waitMs 0).
  const lease = await locks.tryAcquire('nightly-report', { ttlMs: 30_000 });
  if (lease === null) {
    console.log('another worker runs the report');
  } else {
    try {
      console.log(
        `running the report; lease valid for ${Math.round(lease.validUntil - performance.now())} ms`,
      );
      // Pass lease.signal to the work: it aborts if the lease is lost or runs out.
    } finally {
      await lease.release();
    }
  }
} catch (error) {
  // QuorumError lists every node and why it did not agree.
  console.error(error.message);
  process.exitCode = 1;
} finally {
  await locks.close();
}
