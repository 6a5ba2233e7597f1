import assert from 'node:assert/strict';
import {
  assertRejectsWithCode,
  type CheckContext,
  countHandles,
  delay,
  handleGrowth,
  waitForAbort,
  within,
} from './context.js';
import type { LockCheck } from './lock-check.js';

async function assertFreeFor(context: CheckContext, resource: string, why: string): Promise<void> {
  const probe = await context.client();
  const lease = await probe.tryAcquire(resource, { ttlMs: context.scaled(5_000) });
  assert.ok(lease, why);
  await lease.release();
}

export const lifecycleChecks: readonly LockCheck[] = [
  {
    id: 'lease-fields',
    title: 'a lease names its resource, an unguessable owner and (with safe fences) a bigint fence',
    async run(context) {
      const client = await context.client();
      const resource = context.resource('fields');
      const first = await client.acquire(resource, { ttlMs: context.scaled(5_000) });
      assert.equal(first.resource, resource);
      assert.equal(typeof first.owner, 'string');
      assert.ok(first.owner.length >= 16, `owner "${first.owner}" is too short to be unguessable`);
      if (context.capabilities.safeFences) assert.equal(typeof first.fence, 'bigint');
      assert.equal(first.held, true);
      await first.release();
      const second = await client.acquire(resource, { ttlMs: context.scaled(5_000) });
      assert.notEqual(second.owner, first.owner, 'two grants got the same owner token');
      await second.release();
    },
  },
  {
    id: 'release-idempotent',
    title: 'release is idempotent, ends the lease and frees the lock',
    async run(context) {
      const client = await context.client();
      const resource = context.resource('release');
      const lease = await client.acquire(resource, { ttlMs: context.scaled(10_000) });
      await Promise.all([lease.release(), lease.release()]);
      await lease.release();
      assert.equal(lease.held, false, 'a released lease still says it is held');
      assert.equal(lease.signal.aborted, true, 'release did not abort lease.signal');
      await assertFreeFor(context, resource, 'the lock is still held after release');
    },
  },
  {
    id: 'await-using',
    title: '`await using` releases the lease at the end of the block',
    async run(context) {
      const client = await context.client();
      const resource = context.resource('dispose');
      let signal: AbortSignal;
      {
        await using lease = await client.acquire(resource, { ttlMs: context.scaled(10_000) });
        signal = lease.signal;
        assert.equal(lease.held, true);
      }
      assert.equal(signal.aborted, true, 'disposal did not end the lease');
      await assertFreeFor(context, resource, 'the lock is still held after `await using`');
    },
  },
  {
    id: 'close-releases-and-stops',
    title: 'close() releases held leases, stops waiters with ClientClosedError and refuses new work',
    async run(context) {
      const [holder, waiter] = [await context.client(), await context.client()];
      const resource = context.resource('close');
      const lease = await holder.acquire(resource, { ttlMs: context.scaled(20_000) });
      const waiting = waiter.acquire(resource, { ttlMs: context.ttlMs, waitMs: context.scaled(20_000) });
      const stopped = assertRejectsWithCode(() => waiting, 'closed', 'a waiting acquire on a closed client');
      await delay(context.scaled(50));
      await waiter.close();
      await within(stopped, context.scaled(5_000), 'the waiter of a closed client');
      await holder.close();
      await waitForAbort(lease.signal, context.scaled(5_000), 'lease.signal after close()');
      await assertFreeFor(context, resource, 'close() left the lease held');
      await assertRejectsWithCode(
        () => holder.acquire(resource, { ttlMs: context.ttlMs }),
        'closed',
        'acquire after close()',
      );
      await assertRejectsWithCode(
        () => holder.tryAcquire(resource, { ttlMs: context.ttlMs }),
        'closed',
        'tryAcquire after close()',
      );
    },
  },
  {
    id: 'close-leaves-no-handles',
    title: 'close() leaves no timers, sockets or processes behind',
    requires: 'cleanClose',
    async run(context) {
      const before = countHandles(context.leakTypes);
      const client = await context.createClient();
      try {
        const resource = context.resource('handles');
        const lease = await client.acquire(resource, { ttlMs: context.scaled(10_000) });
        await lease.extend(context.scaled(10_000));
        assert.equal(await client.tryAcquire(resource, { ttlMs: context.ttlMs }), null);
        await assertRejectsWithCode(
          () => client.acquire(resource, { ttlMs: context.ttlMs, waitMs: context.scaled(50) }),
          'timeout',
          'acquire on a held lock',
        );
        await client.acquire(context.resource('handles-kept'), { ttlMs: context.scaled(10_000) });
        await lease.release();
      } finally {
        await client.close();
      }
      // Sockets finish closing a few ticks after close() resolves; give them a bounded moment.
      const deadline = Date.now() + context.scaled(3_000);
      let grown = handleGrowth(before, countHandles(context.leakTypes));
      while (grown.length > 0 && Date.now() < deadline) {
        await delay(25);
        grown = handleGrowth(before, countHandles(context.leakTypes));
      }
      assert.deepEqual(grown, [], `handles left after close(): ${grown.join(', ')}`);
    },
  },
  {
    id: 'bad-arguments',
    title:
      'bad arguments (empty resource, ttl ≤ 0, NaN, fractional, non-AbortSignal) give InvalidArgumentError',
    async run(context) {
      const client = await context.client();
      const resource = context.resource('args');
      const ttlMs = context.ttlMs;
      const bad: [string, unknown, unknown][] = [
        ['empty resource', '', { ttlMs }],
        ['non-string resource', 42, { ttlMs }],
        ['zero ttl', resource, { ttlMs: 0 }],
        ['negative ttl', resource, { ttlMs: -1 }],
        ['NaN ttl', resource, { ttlMs: Number.NaN }],
        ['infinite ttl', resource, { ttlMs: Number.POSITIVE_INFINITY }],
        ['fractional ttl', resource, { ttlMs: 1_000.5 }],
        ['ttl past the timer limit', resource, { ttlMs: 2 ** 31 }],
        ['string ttl', resource, { ttlMs: '500' }],
        ['missing options', resource, undefined],
        ['non-AbortSignal signal', resource, { ttlMs, signal: { aborted: false } }],
      ];
      const untyped = client as unknown as Record<
        'acquire' | 'tryAcquire',
        (r: unknown, o: unknown) => unknown
      >;
      for (const [what, badResource, options] of bad) {
        await assertRejectsWithCode(
          () => untyped.acquire(badResource, options),
          'invalid-argument',
          `acquire: ${what}`,
        );
        await assertRejectsWithCode(
          () => untyped.tryAcquire(badResource, options),
          'invalid-argument',
          `tryAcquire: ${what}`,
        );
      }
      for (const waitMs of [-1, Number.NaN]) {
        await assertRejectsWithCode(
          () => client.acquire(resource, { ttlMs, waitMs }),
          'invalid-argument',
          `acquire: waitMs ${waitMs}`,
        );
      }
      const lease = await client.acquire(resource, { ttlMs: context.scaled(10_000) });
      for (const extendMs of [0, -5, Number.NaN, 1_000.5]) {
        await assertRejectsWithCode(() => lease.extend(extendMs), 'invalid-argument', `extend(${extendMs})`);
      }
      assert.equal(lease.held, true, 'a refused extend argument ended the lease');
      await lease.release();
      await assertFreeFor(context, resource, 'rejected arguments left a grant behind');
    },
  },
];
