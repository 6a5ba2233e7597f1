import assert from 'node:assert/strict';
import type { SemaphoreLease } from '../contract-shared.js';
import { MAX_PERMITS } from '../validate.js';
import { assertRejectsWithCode, countHandles, delay, waitForAbort, within } from './context.js';
import {
  type AnySemaphoreClient,
  assertNoGrowth,
  type SharedCheck,
  type SharedCheckContext,
  settle,
} from './shared-context.js';

type Context = SharedCheckContext<AnySemaphoreClient>;
type AnyLease = SemaphoreLease<bigint | undefined>;

/** Asserts all `permits` of `name` are free now: a fresh client takes them at once (and gives them back). */
async function assertAllFree(context: Context, name: string, permits: number, why: string): Promise<void> {
  const probe = await context.client();
  const lease = await probe
    .semaphore(name, { permits })
    .tryAcquire({ ttlMs: context.scaled(5_000), permits });
  assert.ok(lease, why);
  await lease.release();
}

function long(context: Context): { ttlMs: number; waitMs: number } {
  return { ttlMs: context.scaled(20_000), waitMs: context.scaled(10_000) };
}

export const semaphoreChecks: readonly SharedCheck<AnySemaphoreClient>[] = [
  {
    id: 'semaphore-at-most-n',
    title: 'at most `permits` permits are held at once, however many clients contend',
    async run(context) {
      const permits = 3;
      const name = context.resource('at-most-n');
      const clients = await Promise.all(Array.from({ length: 6 }, () => context.client()));
      let inUse = 0;
      let most = 0;
      const fences = new Set<string>();
      await within(
        Promise.all(
          clients.map(async (client, index) => {
            const semaphore = client.semaphore(name, { permits });
            for (let round = 0; round < 4; round++) {
              const want = (index + round) % 2 === 0 ? 1 : 2;
              const lease = await semaphore.acquire({ ...long(context), permits: want });
              assert.equal(lease.permits, want);
              inUse += want;
              most = Math.max(most, inUse);
              assert.ok(inUse <= permits, `${inUse} permits held at once on a semaphore of ${permits}`);
              fences.add(String(lease.fence));
              await delay(2);
              inUse -= want;
              await lease.release();
            }
          }),
        ),
        context.scaled(30_000),
        'the contending clients',
      );
      assert.ok(most > 1, 'no two grants ever overlapped: the semaphore acted as a mutex');
      assert.equal(fences.size, 24, 'two grants carried the same fence');
      // Deterministic too: N single permits at once, then nothing more.
      const [a, b] = [await context.client(), await context.client()];
      const held: AnyLease[] = [];
      for (let i = 0; i < permits; i++) {
        const lease = await a.semaphore(name, { permits }).tryAcquire({ ttlMs: context.scaled(10_000) });
        assert.ok(lease, `permit ${i + 1} of ${permits} was refused while free`);
        held.push(lease);
      }
      assert.equal(
        await b.semaphore(name, { permits }).tryAcquire({ ttlMs: context.ttlMs }),
        null,
        'a permit beyond the limit was granted',
      );
      for (const lease of held) await lease.release();
      await assertAllFree(context, name, permits, 'released permits did not come back');
    },
  },
  {
    id: 'semaphore-fences-increase',
    title: 'every grant carries a fence above every grant made before it (with safe fences)',
    async run(context) {
      const client = await context.client();
      const semaphore = client.semaphore(context.resource('fences'), { permits: 2 });
      let last: bigint | undefined;
      const held: AnyLease[] = [];
      for (let i = 0; i < 6; i++) {
        const lease = await semaphore.acquire(long(context));
        if (typeof lease.fence === 'bigint') {
          if (last !== undefined) assert.ok(lease.fence > last, `fence ${lease.fence} after ${last}`);
          last = lease.fence;
        }
        held.push(lease);
        // Keep one holder across grants, so fences are compared between concurrent holders too.
        if (held.length === 2) await held.shift()?.release();
      }
      for (const lease of held) await lease.release();
    },
  },
  {
    id: 'semaphore-fifo',
    title: 'waiters are granted in arrival order; a larger request at the head is not passed by smaller ones',
    requires: 'blocking',
    async run(context) {
      const name = context.resource('fifo');
      const holder = (await context.client()).semaphore(name, { permits: 2 });
      const first = await holder.acquire(long(context));
      const second = await holder.acquire(long(context));
      const order: string[] = [];
      const leases = new Map<string, AnyLease>();
      const queue = async (label: string, want: number): Promise<void> => {
        const semaphore = (await context.client()).semaphore(name, { permits: 2 });
        const waiting = semaphore.acquire({ ...long(context), permits: want }).then((lease) => {
          order.push(label);
          leases.set(label, lease);
        });
        turns.push(waiting);
        await delay(context.scaled(100));
      };
      const turns: Promise<void>[] = [];
      await queue('A1', 1);
      await queue('B2', 2);
      await queue('C1', 1);
      await first.release();
      await within(turns[0] as Promise<void>, context.scaled(5_000), 'A after the first release');
      await second.release();
      // One permit is free now, but B (2 permits) is ahead of C (1 permit): C must not pass it.
      await delay(context.scaled(200));
      assert.deepEqual(order, ['A1'], 'a smaller request passed the larger one queued ahead of it');
      await leases.get('A1')?.release();
      await within(turns[1] as Promise<void>, context.scaled(5_000), 'B after A');
      await leases.get('B2')?.release();
      await within(turns[2] as Promise<void>, context.scaled(5_000), 'C after B');
      assert.deepEqual(order, ['A1', 'B2', 'C1']);
      await leases.get('C1')?.release();
      await assertAllFree(context, name, 2, 'permits still held after every waiter released');
    },
  },
  {
    id: 'semaphore-expiry',
    title: 'an unextended grant expires: its signal aborts and its permits go to a waiter',
    requires: 'expiry',
    async run(context) {
      const name = context.resource('expiry');
      const a = (await context.client()).semaphore(name, { permits: 1 });
      const b = (await context.client()).semaphore(name, { permits: 1 });
      const lease = await a.acquire({ ttlMs: context.ttlMs, waitMs: context.scaled(5_000) });
      const waiting = b.acquire({ ttlMs: context.scaled(10_000), waitMs: context.scaled(20_000) });
      await waitForAbort(lease.signal, context.ttlMs + context.scaled(5_000), 'the expired lease');
      assert.equal(lease.held, false);
      const next = await within(waiting, context.scaled(10_000), 'the waiter after expiry');
      if (typeof next.fence === 'bigint' && typeof lease.fence === 'bigint')
        assert.ok(next.fence > lease.fence);
      await assertRejectsWithCode(() => lease.extend(context.ttlMs), 'lost', 'extend after expiry');
      // Releasing the expired lease must not take the new holder's permit.
      await lease.release().catch(() => undefined);
      assert.equal(next.held, true);
      assert.equal(
        await b.tryAcquire({ ttlMs: context.ttlMs }),
        null,
        'the expired release freed another holder',
      );
      await next.release();
    },
  },
  {
    id: 'semaphore-extend',
    title: 'extend keeps the permits held; a released lease cannot be extended',
    async run(context) {
      const name = context.resource('extend');
      const client = await context.client();
      const lease = await client.semaphore(name, { permits: 1 }).acquire(long(context));
      await lease.extend(context.scaled(20_000));
      assert.equal(lease.held, true);
      assert.equal(await client.semaphore(name, { permits: 1 }).tryAcquire({ ttlMs: context.ttlMs }), null);
      await lease.release();
      await assertRejectsWithCode(() => lease.extend(context.ttlMs), 'lost', 'extend after release');
    },
  },
  {
    id: 'semaphore-release-idempotent',
    title: 'release is idempotent, ends the lease and frees its permits; `await using` releases too',
    async run(context) {
      const name = context.resource('release');
      const client = await context.client();
      const semaphore = client.semaphore(name, { permits: 3 });
      const lease = await semaphore.acquire({ ...long(context), permits: 2 });
      await Promise.all([lease.release(), lease.release()]);
      await lease.release();
      assert.equal(lease.held, false);
      assert.equal(lease.signal.aborted, true, 'release did not abort lease.signal');
      await assertAllFree(context, name, 3, 'permits still held after release');
      let signal: AbortSignal;
      {
        await using disposed = await semaphore.acquire({ ...long(context), permits: 3 });
        signal = disposed.signal;
      }
      assert.equal(signal.aborted, true, '`await using` did not end the lease');
      await assertAllFree(context, name, 3, 'permits still held after `await using`');
    },
  },
  {
    id: 'semaphore-timeout-abort',
    title: 'a wait ends with LockTimeoutError at waitMs, or LockAbortedError on abort, leaving nothing held',
    async run(context) {
      const name = context.resource('stop');
      const holder = (await context.client()).semaphore(name, { permits: 2 });
      const waiterClient = await context.client();
      const waiter = waiterClient.semaphore(name, { permits: 2 });
      const held = await holder.acquire({ ...long(context), permits: 2 });
      await within(
        assertRejectsWithCode(
          () => waiter.acquire({ ttlMs: context.ttlMs, waitMs: context.scaled(200) }),
          'timeout',
          'acquire past waitMs',
        ),
        context.scaled(10_000),
        'the timed-out acquire',
      );
      const controller = new AbortController();
      const aborted = settle(waiter.acquire({ ...long(context), signal: controller.signal, permits: 2 }));
      await delay(context.scaled(100));
      controller.abort(new Error('caller gave up'));
      const outcome = await within(aborted, context.scaled(5_000), 'the aborted acquire');
      assert.ok('error' in outcome, 'the aborted acquire was granted');
      assert.equal((outcome.error as { code?: unknown }).code, 'aborted');
      await assertRejectsWithCode(
        () => waiter.acquire({ ttlMs: context.ttlMs, signal: AbortSignal.abort() }),
        'aborted',
        'acquire with an already-aborted signal',
      );
      await held.release();
      await assertAllFree(context, name, 2, 'a stopped waiter left permits held');
    },
  },
  {
    id: 'semaphore-aborted-head-unblocks',
    title: 'an aborted waiter at the head of the queue lets the smaller requests behind it in',
    requires: 'blocking',
    async run(context) {
      const name = context.resource('abort-head');
      const holder = (await context.client()).semaphore(name, { permits: 2 });
      const held = await holder.acquire(long(context));
      const controller = new AbortController();
      const big = settle(
        (await context.client())
          .semaphore(name, { permits: 2 })
          .acquire({ ...long(context), permits: 2, signal: controller.signal }),
      );
      await delay(context.scaled(100));
      const small = (await context.client()).semaphore(name, { permits: 2 }).acquire(long(context));
      await delay(context.scaled(100));
      controller.abort();
      const lease = await within(small, context.scaled(5_000), 'the small waiter behind an aborted head');
      assert.ok('error' in (await big), 'the aborted head was granted');
      await lease.release();
      await held.release();
      await assertAllFree(context, name, 2, 'permits still held');
    },
  },
  {
    id: 'semaphore-close',
    title: 'close() releases held permits, stops waiters with ClientClosedError and refuses new work',
    async run(context) {
      const name = context.resource('close');
      const [holderClient, waiterClient] = [await context.client(), await context.client()];
      const lease = await holderClient.semaphore(name, { permits: 1 }).acquire(long(context));
      const waiting = settle(waiterClient.semaphore(name, { permits: 1 }).acquire(long(context)));
      await delay(context.scaled(50));
      await waiterClient.close();
      const outcome = await within(waiting, context.scaled(5_000), 'the waiter of a closed client');
      assert.ok('error' in outcome, 'a waiter of a closed client was granted');
      assert.equal((outcome.error as { code?: unknown }).code, 'closed');
      await holderClient.close();
      await waitForAbort(lease.signal, context.scaled(5_000), 'lease.signal after close()');
      await assertAllFree(context, name, 1, 'close() left the permit held');
      await assertRejectsWithCode(
        () => holderClient.semaphore(name, { permits: 1 }).acquire(long(context)),
        'closed',
        'acquire after close()',
      );
    },
  },
  {
    id: 'semaphore-close-leaves-no-handles',
    title: 'close() leaves no timers, sockets or processes behind',
    requires: 'cleanClose',
    async run(context) {
      const before = countHandles(context.leakTypes);
      const client = await context.createClient();
      try {
        const semaphore = client.semaphore(context.resource('handles'), { permits: 1 });
        const lease = await semaphore.acquire(long(context));
        await lease.extend(context.scaled(10_000));
        await assertRejectsWithCode(
          () => semaphore.acquire({ ttlMs: context.ttlMs, waitMs: context.scaled(50) }),
          'timeout',
          'acquire on a full semaphore',
        );
        await client.semaphore(context.resource('handles-kept'), { permits: 1 }).acquire(long(context));
        await lease.release();
      } finally {
        await client.close();
      }
      await assertNoGrowth(context as SharedCheckContext<unknown>, before);
    },
  },
  {
    id: 'semaphore-bad-arguments',
    title: 'bad permit counts, a mismatched limit and bad options give InvalidArgumentError',
    async run(context) {
      const client = await context.client();
      const name = context.resource('args');
      const untyped = client as unknown as { semaphore(n: unknown, o: unknown): unknown };
      for (const [what, badName, options] of [
        ['empty name', '', { permits: 1 }],
        ['zero permits', name, { permits: 0 }],
        ['negative permits', name, { permits: -1 }],
        ['fractional permits', name, { permits: 1.5 }],
        ['NaN permits', name, { permits: Number.NaN }],
        ['too many permits', name, { permits: MAX_PERMITS + 1 }],
        ['missing options', name, undefined],
      ] as const) {
        await assertRejectsWithCode(
          () => untyped.semaphore(badName, options),
          'invalid-argument',
          `semaphore(): ${what}`,
        );
      }
      const semaphore = client.semaphore(name, { permits: 2 });
      for (const permits of [0, 3, 1.5]) {
        await assertRejectsWithCode(
          () => semaphore.acquire({ ttlMs: context.ttlMs, permits }),
          'invalid-argument',
          `acquire of ${permits} permits out of 2`,
        );
        await assertRejectsWithCode(
          () => semaphore.tryAcquire({ ttlMs: context.ttlMs, permits }),
          'invalid-argument',
          `tryAcquire of ${permits} permits out of 2`,
        );
      }
      await assertRejectsWithCode(() => semaphore.acquire({ ttlMs: 0 }), 'invalid-argument', 'ttlMs 0');
      // While the semaphore is in use, another client naming it with another count is refused.
      const held = await semaphore.acquire(long(context));
      const other = (await context.client()).semaphore(name, { permits: 5 });
      await assertRejectsWithCode(
        () => other.acquire({ ttlMs: context.ttlMs, waitMs: context.scaled(1_000) }),
        'invalid-argument',
        'acquire with another permit count than the holders use',
      );
      await assertRejectsWithCode(
        () => other.tryAcquire({ ttlMs: context.ttlMs }),
        'invalid-argument',
        'tryAcquire with another permit count than the holders use',
      );
      assert.equal(held.held, true);
      await held.release();
      await assertAllFree(context, name, 2, 'refused arguments left permits held');
    },
  },
];
