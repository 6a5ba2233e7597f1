import assert from 'node:assert/strict';
import { monotonicNow } from '../clock.js';
import type { Lease, LockClient } from '../contract.js';
import { assertRejectsWithCode, type CheckContext, delay, within } from './context.js';
import type { LockCheck } from './lock-check.js';

/** Asserts the lock is free right now: a fresh tryAcquire gets it (and gives it back). */
async function assertFree(
  context: CheckContext,
  // biome-ignore lint/suspicious/noExplicitAny: works for fenced and unfenced clients.
  client: LockClient<any>,
  resource: string,
  why: string,
): Promise<void> {
  const lease = await client.tryAcquire(resource, { ttlMs: context.scaled(5_000) });
  assert.ok(lease, why);
  await lease.release();
}

/** How long a waiter is given before the test aborts or expects a grant. */
function settle(context: CheckContext): number {
  return context.scaled(100);
}

export const waitingChecks: readonly LockCheck[] = [
  {
    id: 'try-acquire-null-when-held',
    title: 'tryAcquire returns null when held and the lease once released',
    async run(context) {
      const [a, b] = [await context.client(), await context.client()];
      const resource = context.resource('try');
      const held = await a.acquire(resource, {
        ttlMs: context.scaled(10_000),
        waitMs: context.scaled(5_000),
      });
      assert.equal(await b.tryAcquire(resource, { ttlMs: context.ttlMs }), null, 'tryAcquire on a held lock');
      const other = await b.tryAcquire(context.resource('try-other'), { ttlMs: context.ttlMs });
      assert.ok(other, 'a lock on another resource was refused');
      await other.release();
      await held.release();
      await assertFree(context, b, resource, 'tryAcquire after release returned null');
    },
  },
  {
    id: 'acquire-timeout',
    title: 'acquire past waitMs fails with LockTimeoutError and leaves nothing granted',
    async run(context) {
      const [a, b, c] = [await context.client(), await context.client(), await context.client()];
      const resource = context.resource('timeout');
      const held = await a.acquire(resource, {
        ttlMs: context.scaled(10_000),
        waitMs: context.scaled(5_000),
      });
      const waitMs = context.scaled(200);
      const startedAt = monotonicNow();
      await within(
        assertRejectsWithCode(
          () => b.acquire(resource, { ttlMs: context.ttlMs, waitMs }),
          'timeout',
          'acquire',
        ),
        context.scaled(10_000),
        'an acquire with waitMs',
      );
      const waited = monotonicNow() - startedAt;
      // Timers may fire a millisecond early against performance.now(); anything more is a bug.
      assert.ok(waited >= waitMs - 5, `gave up after ${waited.toFixed(0)} ms, before waitMs ${waitMs}`);
      await held.release();
      await assertFree(context, c, resource, 'the timed-out waiter left a grant behind');
    },
  },
  {
    id: 'abort-cancels-waiter',
    title: 'an AbortSignal cancels a waiting acquire with LockAbortedError and leaves nothing granted',
    async run(context) {
      const [a, b, c] = [await context.client(), await context.client(), await context.client()];
      const resource = context.resource('abort');
      const held = await a.acquire(resource, {
        ttlMs: context.scaled(10_000),
        waitMs: context.scaled(5_000),
      });
      const controller = new AbortController();
      const waiting = b.acquire(resource, {
        ttlMs: context.ttlMs,
        waitMs: context.scaled(20_000),
        signal: controller.signal,
      });
      const outcome = assertRejectsWithCode(() => waiting, 'aborted', 'the aborted acquire');
      await delay(settle(context));
      controller.abort(new Error('caller gave up'));
      await within(outcome, context.scaled(5_000), 'the aborted acquire');
      await held.release();
      await assertFree(context, c, resource, 'the aborted waiter left a grant behind');
    },
  },
  {
    id: 'abort-racing-release',
    title: 'an abort racing the release either yields a lease or leaves nothing granted',
    async run(context) {
      const [a, b, c] = [await context.client(), await context.client(), await context.client()];
      const resource = context.resource('abort-race');
      for (let round = 0; round < 5; round++) {
        const held = await a.acquire(resource, {
          ttlMs: context.scaled(10_000),
          waitMs: context.scaled(5_000),
        });
        const controller = new AbortController();
        const waiting = b.acquire(resource, {
          ttlMs: context.scaled(10_000),
          waitMs: context.scaled(20_000),
          signal: controller.signal,
        });
        type Outcome = { lease?: Lease<bigint | undefined>; error?: unknown };
        const settled = waiting.then(
          (lease): Outcome => ({ lease }),
          (error: unknown): Outcome => ({ error }),
        );
        await delay(settle(context));
        const released = held.release();
        if (round % 2 === 0) controller.abort();
        else setImmediate(() => controller.abort());
        await released;
        const outcome = await within(settled, context.scaled(5_000), `round ${round}: the racing acquire`);
        if (outcome.lease) {
          await outcome.lease.release();
        } else {
          const code = (outcome.error as { code?: unknown } | undefined)?.code;
          assert.equal(code, 'aborted', `round ${round}: expected an "aborted" error`);
        }
        await assertFree(context, c, resource, `round ${round}: the aborted waiter left a grant behind`);
      }
    },
  },
  {
    id: 'aborted-signal-refused',
    title: 'an already-aborted signal rejects with LockAbortedError even on a free lock',
    async run(context) {
      const [a, b] = [await context.client(), await context.client()];
      const resource = context.resource('pre-aborted');
      await assertRejectsWithCode(
        () => a.acquire(resource, { ttlMs: context.ttlMs, signal: AbortSignal.abort() }),
        'aborted',
        'acquire with an aborted signal',
      );
      await assertFree(context, b, resource, 'an acquire with an aborted signal left a grant behind');
    },
  },
  {
    id: 'waiter-woken-by-release',
    title: 'a waiting acquire is granted soon after the release, without waiting for expiry',
    requires: 'blocking',
    async run(context) {
      const [a, b] = [await context.client(), await context.client()];
      const resource = context.resource('wake');
      const held = await a.acquire(resource, {
        ttlMs: context.scaled(20_000),
        waitMs: context.scaled(5_000),
      });
      const waiting = b.acquire(resource, { ttlMs: context.scaled(10_000), waitMs: context.scaled(15_000) });
      await delay(settle(context));
      await held.release();
      // Well under the holder's 20 s TTL: the waiter was woken by the release, not by expiry or a slow poll.
      const lease = await within(waiting, context.scaled(2_000), 'the waiter after the release');
      if (context.capabilities.safeFences) assert.ok(lease.fence > held.fence);
      await lease.release();
    },
  },
  {
    id: 'fair-order',
    title: 'waiters are granted in arrival order',
    requires: 'fair',
    async run(context) {
      const holder = await context.client();
      const waiters = [await context.client(), await context.client(), await context.client()];
      const resource = context.resource('fair');
      const held = await holder.acquire(resource, {
        ttlMs: context.scaled(20_000),
        waitMs: context.scaled(5_000),
      });
      const order: number[] = [];
      const turns: Promise<void>[] = [];
      for (const [index, client] of waiters.entries()) {
        turns.push(
          client
            .acquire(resource, { ttlMs: context.scaled(10_000), waitMs: context.scaled(20_000) })
            .then(async (lease) => {
              order.push(index);
              await lease.release();
            }),
        );
        await delay(settle(context));
      }
      await held.release();
      await within(Promise.all(turns), context.scaled(15_000), 'the queued waiters');
      assert.deepEqual(order, [0, 1, 2], 'waiters were not granted in arrival order');
    },
  },
];
