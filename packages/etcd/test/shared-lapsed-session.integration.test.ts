import { monotonicNow } from '@fencekit/core';
import { EtcdSharedLockClient } from '@fencekit/etcd';
import { afterEach, describe, expect, it } from 'vitest';
import { runPrefix, sharedHosts } from './support/clients.js';
import { busyLoop, outcome } from './support/lapse.js';

/**
 * The shared client under the load of `lapsed-session.integration.test.ts` (the mutex's, 8d1cfed): with
 * TTLs of 20-79 ms and an event loop busy 15 ms in every 20, grants and sessions lapse on their way
 * back although etcd answered every request. That is a lapse, not an outage nor a lost lock: `acquire`
 * (semaphore and read-write lock) must back off and queue again while its `waitMs` allows, ending
 * granted or `timeout`; a try ends held, null or `lost`. Before, an acquire gave up with `lost` after 5
 * lapsed grants in a row. Outcomes are asserted by kind, never by timing.
 */
const clients: EtcdSharedLockClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('etcd shared client: grants that lapse before use on a busy event loop', () => {
  it('semaphore and rwlock acquires end granted or timed out, tries held, null or lost', async () => {
    const workers = [0, 1, 2].map(
      () => new EtcdSharedLockClient({ hosts: sharedHosts(), prefix: `${runPrefix}-lapse` }),
    );
    clients.push(...workers);
    const seen: Record<string, number> = {};
    const stop = busyLoop();
    // Bounded: 60 calls in all, and no new call after 25 s (each waits at most 3 s).
    const until = monotonicNow() + 25_000;
    try {
      await Promise.all(
        workers.map(async (client, w) => {
          const semaphore = client.semaphore(`lapse-${w}`, { permits: 2 });
          const rw = client.readWriteLock(`lapse-rw-${w}`);
          for (let i = 0; i < 20 && monotonicNow() < until; i++) {
            // A distinct TTL per call: each one a fresh session pool entry, granted under the load.
            const ttlMs = 20 + ((w * 20 + i) % 60);
            const waitMs = 3_000;
            const kind = ['acquire', 'read', 'write', 'try'][i % 4] as string;
            const result =
              kind === 'acquire'
                ? await outcome(() => semaphore.acquire({ ttlMs, waitMs }))
                : kind === 'read'
                  ? await outcome(() => rw.read({ ttlMs, waitMs }))
                  : kind === 'write'
                    ? await outcome(() => rw.write({ ttlMs, waitMs }))
                    : await outcome(() => semaphore.tryAcquire({ ttlMs }));
            const key = `${kind === 'try' ? 'try' : 'acquire'}:${result}`;
            seen[key] = (seen[key] ?? 0) + 1;
          }
        }),
      );
    } finally {
      stop();
    }
    const allowed = new Set(['acquire:granted', 'acquire:timeout', 'try:granted', 'try:free', 'try:lost']);
    const wrong = Object.entries(seen).filter(([kind]) => !allowed.has(kind));
    expect(wrong, `outcomes: ${JSON.stringify(seen)}`).toEqual([]);
  }, 120_000);
});
