import { describe, expect, it } from 'vitest';
import { HistoryReadError, readLines } from '../src/history/index.js';

/**
 * A history path that is a kernel pseudo file whose reads block (/proc/kmsg with nothing logged, #14 review
 * HIGH 5): opened the usual way its read held a thread of libuv's pool for good, so even after the time
 * budget's verdict the process never exited. Opened without blocking, the read fails at once: bad input.
 */
describe('a history that is a blocking pseudo file', () => {
  it('/proc/kmsg is a read error within seconds, not a read that never returns', async () => {
    const read = (async () => {
      for await (const _ of readLines('/proc/kmsg', '/proc/kmsg')) {
        // Whatever the kernel had logged: not a history, and not what this test waits for.
      }
    })();
    const outcome = await Promise.race([
      read.then(
        () => 'ended',
        (error: unknown) => error,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still blocked after 10 s'), 10_000).unref()),
    ]);
    // Without permission (not root) the open fails instead: a read error too.
    expect(outcome).toBeInstanceOf(HistoryReadError);
  }, 20_000);
});
