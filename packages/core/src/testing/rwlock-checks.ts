import assert from 'node:assert/strict';
import type { AcquireOptions } from '../contract.js';
import type { ReadWriteLease } from '../contract-shared.js';
import { assertRejectsWithCode, countHandles, delay, waitForAbort, within } from './context.js';
import {
  type AnyReadWriteLockClient,
  assertNoGrowth,
  type SharedCheck,
  type SharedCheckContext,
  settle,
} from './shared-context.js';

type Context = SharedCheckContext<AnyReadWriteLockClient>;
type AnyLease = ReadWriteLease<bigint | undefined>;

/** Asserts nobody holds `name`: a fresh client takes the write side at once (and gives it back). */
async function assertFree(context: Context, name: string, why: string): Promise<void> {
  const probe = await context.client();
  const lease = await probe.readWriteLock(name).tryWrite({ ttlMs: context.scaled(5_000) });
  assert.ok(lease, why);
  await lease.release();
}

function long(context: Context): AcquireOptions {
  return { ttlMs: context.scaled(20_000), waitMs: context.scaled(10_000) };
}

export const readWriteLockChecks: readonly SharedCheck<AnyReadWriteLockClient>[] = [
  {
    id: 'rwlock-exclusion',
    title: 'a writer never overlaps any other holder, while readers do share the lock',
    async run(context) {
      const name = context.resource('exclusion');
      const clients = await Promise.all(Array.from({ length: 6 }, () => context.client()));
      let readers = 0;
      let writers = 0;
      let mostReaders = 0;
      await within(
        Promise.all(
          clients.map(async (client, index) => {
            const lock = client.readWriteLock(name);
            for (let round = 0; round < 5; round++) {
              const write = (index + round) % 3 === 0;
              const lease = await (write ? lock.write(long(context)) : lock.read(long(context)));
              assert.equal(lease.mode, write ? 'write' : 'read');
              if (write) writers++;
              else readers++;
              mostReaders = Math.max(mostReaders, readers);
              assert.ok(writers <= 1, `${writers} writers at once`);
              assert.ok(writers === 0 || readers === 0, `a writer overlapped ${readers} readers`);
              await delay(3);
              if (write) writers--;
              else readers--;
              await lease.release();
            }
          }),
        ),
        context.scaled(30_000),
        'the contending clients',
      );
      // Deterministic sharing: two readers at once; then neither a writer nor (with a writer) a reader.
      const [a, b] = [await context.client(), await context.client()];
      const first = await a.readWriteLock(name).read(long(context));
      const second = await b.readWriteLock(name).tryRead({ ttlMs: context.scaled(10_000) });
      assert.ok(second, 'a second reader was refused while only a reader held the lock');
      assert.equal(
        await b.readWriteLock(name).tryWrite({ ttlMs: context.ttlMs }),
        null,
        'a writer joined readers',
      );
      await first.release();
      await second.release();
      const writer = await a.readWriteLock(name).write(long(context));
      assert.equal(
        await b.readWriteLock(name).tryRead({ ttlMs: context.ttlMs }),
        null,
        'a reader joined a writer',
      );
      assert.equal(await b.readWriteLock(name).tryWrite({ ttlMs: context.ttlMs }), null, 'two writers');
      await writer.release();
      await assertFree(context, name, 'the lock is still held after every lease was released');
    },
  },
  {
    id: 'rwlock-writer-not-starved',
    title: 'a queued writer blocks readers that arrive after it, and is granted before them',
    requires: 'blocking',
    async run(context) {
      const name = context.resource('starve');
      const [r1, w, r2] = [await context.client(), await context.client(), await context.client()];
      const reading = await r1.readWriteLock(name).read(long(context));
      const order: string[] = [];
      const writing = w
        .readWriteLock(name)
        .write(long(context))
        .then((lease) => {
          order.push('writer');
          return lease;
        });
      // Until the writer is queued a reader may still join (it came first): probe until one is refused,
      // instead of guessing how long queueing takes on a loaded machine. From then on every reader waits.
      await within(
        (async () => {
          for (;;) {
            const probe = await r2.readWriteLock(name).tryRead({ ttlMs: context.ttlMs });
            if (probe === null) return;
            await probe.release();
            await delay(10);
          }
        })(),
        context.scaled(5_000),
        'a reader refused once the writer queued',
      );
      const lateReading = r2
        .readWriteLock(name)
        .read(long(context))
        .then((lease) => {
          order.push('reader');
          return lease;
        });
      await delay(context.scaled(100));
      assert.deepEqual(order, [], 'a later reader passed the queued writer');
      await reading.release();
      const writer = await within(writing, context.scaled(5_000), 'the writer after the reader left');
      await delay(context.scaled(50));
      assert.deepEqual(order, ['writer'], 'a reader was granted alongside the writer');
      await writer.release();
      const reader = await within(lateReading, context.scaled(5_000), 'the reader after the writer');
      assert.deepEqual(order, ['writer', 'reader']);
      await reader.release();
    },
  },
  {
    id: 'rwlock-fences',
    title: 'write fences strictly increase across writers, and every grant is above the writers before it',
    async run(context) {
      const name = context.resource('fences');
      const client = await context.client();
      const lock = client.readWriteLock(name);
      let lastWrite: bigint | undefined;
      let highest: bigint | undefined;
      for (let round = 0; round < 4; round++) {
        const readers = [await lock.read(long(context)), await lock.read(long(context))];
        for (const reader of readers) {
          if (typeof reader.fence !== 'bigint') continue;
          if (lastWrite !== undefined)
            assert.ok(reader.fence > lastWrite, 'a reader fence below the last writer');
          highest = highest === undefined || reader.fence > highest ? reader.fence : highest;
        }
        for (const reader of readers) await reader.release();
        const writer = await lock.write(long(context));
        if (typeof writer.fence === 'bigint') {
          if (highest !== undefined)
            assert.ok(writer.fence > highest, `writer fence ${writer.fence} ≤ ${highest}`);
          lastWrite = writer.fence;
          highest = writer.fence;
        }
        await writer.release();
      }
    },
  },
  {
    id: 'rwlock-fifo-writers',
    title: 'queued writers and readers are granted in arrival order',
    requires: 'blocking',
    async run(context) {
      const name = context.resource('fifo');
      const holder = await (await context.client()).readWriteLock(name).write(long(context));
      const order: string[] = [];
      const turns: Promise<void>[] = [];
      for (const [label, mode] of [
        ['w1', 'write'],
        ['r1', 'read'],
        ['w2', 'write'],
      ] as const) {
        const lock = (await context.client()).readWriteLock(name);
        turns.push(
          (mode === 'write' ? lock.write(long(context)) : lock.read(long(context))).then(async (lease) => {
            order.push(label);
            await delay(context.scaled(20));
            await lease.release();
          }),
        );
        await delay(context.scaled(100));
      }
      await holder.release();
      await within(Promise.all(turns), context.scaled(15_000), 'the queued waiters');
      assert.deepEqual(order, ['w1', 'r1', 'w2'], 'waiters were not granted in arrival order');
    },
  },
  {
    id: 'rwlock-upgrade-unsupported',
    title: 'upgrade and downgrade reject with UnsupportedOperationError and leave the lease held',
    async run(context) {
      const lock = (await context.client()).readWriteLock(context.resource('upgrade'));
      const reader = await lock.read(long(context));
      await assertRejectsWithCode(() => reader.upgrade(), 'unsupported', 'upgrade of a read lease');
      await assertRejectsWithCode(() => reader.downgrade(), 'unsupported', 'downgrade of a read lease');
      assert.equal(reader.held, true);
      await reader.release();
      const writer = await lock.write(long(context));
      await assertRejectsWithCode(() => writer.downgrade(), 'unsupported', 'downgrade of a write lease');
      await assertRejectsWithCode(() => writer.upgrade(), 'unsupported', 'upgrade of a write lease');
      assert.equal(writer.held, true);
      await writer.release();
    },
  },
  {
    id: 'rwlock-expiry',
    title: 'an unextended write lease expires: its signal aborts and waiting readers get in',
    requires: 'expiry',
    async run(context) {
      const name = context.resource('expiry');
      const writer = await (await context.client())
        .readWriteLock(name)
        .write({ ttlMs: context.ttlMs, waitMs: context.scaled(5_000) });
      const waiting = (await context.client()).readWriteLock(name).read(long(context));
      await waitForAbort(writer.signal, context.ttlMs + context.scaled(5_000), 'the expired write lease');
      const reader = await within(waiting, context.scaled(10_000), 'the reader after expiry');
      if (typeof reader.fence === 'bigint' && typeof writer.fence === 'bigint')
        assert.ok(reader.fence > writer.fence);
      await writer.release().catch(() => undefined);
      assert.equal(reader.held, true);
      await reader.release();
    },
  },
  {
    id: 'rwlock-release-idempotent',
    title: 'release is idempotent and frees the lock; `await using` releases too',
    async run(context) {
      const name = context.resource('release');
      const lock = (await context.client()).readWriteLock(name);
      const writer = await lock.write(long(context));
      await Promise.all([writer.release(), writer.release()]);
      await writer.release();
      assert.equal(writer.held, false);
      assert.equal(writer.signal.aborted, true);
      await assertFree(context, name, 'the lock is still held after release');
      let signal: AbortSignal;
      {
        await using reader = await lock.read(long(context));
        signal = reader.signal;
      }
      assert.equal(signal.aborted, true, '`await using` did not end the lease');
      await assertFree(context, name, 'the lock is still held after `await using`');
    },
  },
  {
    id: 'rwlock-timeout-abort',
    title: 'waits end at waitMs or on abort; an aborted queued writer lets the readers behind it in',
    async run(context) {
      const name = context.resource('stop');
      const reading = await (await context.client()).readWriteLock(name).read(long(context));
      const writerLock = (await context.client()).readWriteLock(name);
      await within(
        assertRejectsWithCode(
          () => writerLock.write({ ttlMs: context.ttlMs, waitMs: context.scaled(200) }),
          'timeout',
          'write past waitMs',
        ),
        context.scaled(10_000),
        'the timed-out write',
      );
      const controller = new AbortController();
      const aborted = settle(writerLock.write({ ...long(context), signal: controller.signal }));
      await delay(context.scaled(100));
      const lateReader = (await context.client()).readWriteLock(name).read(long(context));
      await delay(context.scaled(100));
      controller.abort();
      const outcome = await within(aborted, context.scaled(5_000), 'the aborted write');
      assert.ok('error' in outcome, 'the aborted writer was granted');
      assert.equal((outcome.error as { code?: unknown }).code, 'aborted');
      const reader = await within(lateReader, context.scaled(5_000), 'the reader behind the aborted writer');
      await reader.release();
      await reading.release();
      await assertFree(context, name, 'a stopped writer left the lock held');
    },
  },
  {
    id: 'rwlock-close',
    title: 'close() releases held leases, stops waiters with ClientClosedError and refuses new work',
    async run(context) {
      const name = context.resource('close');
      const [holderClient, waiterClient] = [await context.client(), await context.client()];
      const lease: AnyLease = await holderClient.readWriteLock(name).read(long(context));
      const waiting = settle(waiterClient.readWriteLock(name).write(long(context)));
      await delay(context.scaled(50));
      await waiterClient.close();
      const outcome = await within(waiting, context.scaled(5_000), 'the waiter of a closed client');
      assert.ok('error' in outcome, 'a waiter of a closed client was granted');
      assert.equal((outcome.error as { code?: unknown }).code, 'closed');
      await holderClient.close();
      await waitForAbort(lease.signal, context.scaled(5_000), 'lease.signal after close()');
      await assertFree(context, name, 'close() left the lease held');
      await assertRejectsWithCode(
        () => holderClient.readWriteLock(name).read(long(context)),
        'closed',
        'read after close()',
      );
    },
  },
  {
    id: 'rwlock-close-leaves-no-handles',
    title: 'close() leaves no timers, sockets or processes behind',
    requires: 'cleanClose',
    async run(context) {
      const before = countHandles(context.leakTypes);
      const client = await context.createClient();
      try {
        const lock = client.readWriteLock(context.resource('handles'));
        const lease = await lock.write(long(context));
        await lease.extend(context.scaled(10_000));
        await assertRejectsWithCode(
          () => lock.read({ ttlMs: context.ttlMs, waitMs: context.scaled(50) }),
          'timeout',
          'read while written',
        );
        await client.readWriteLock(context.resource('handles-kept')).read(long(context));
        await lease.release();
      } finally {
        await client.close();
      }
      await assertNoGrowth(context as SharedCheckContext<unknown>, before);
    },
  },
  {
    id: 'rwlock-bad-arguments',
    title: 'bad names and options give InvalidArgumentError',
    async run(context) {
      const client = await context.client();
      const untyped = client as unknown as { readWriteLock(n: unknown): unknown };
      await assertRejectsWithCode(() => untyped.readWriteLock(''), 'invalid-argument', 'readWriteLock("")');
      await assertRejectsWithCode(() => untyped.readWriteLock(7), 'invalid-argument', 'readWriteLock(7)');
      const lock = client.readWriteLock(context.resource('args'));
      for (const ttlMs of [0, -1, 1.5, Number.NaN]) {
        await assertRejectsWithCode(() => lock.read({ ttlMs }), 'invalid-argument', `read ttlMs ${ttlMs}`);
        await assertRejectsWithCode(
          () => lock.tryWrite({ ttlMs }),
          'invalid-argument',
          `tryWrite ttlMs ${ttlMs}`,
        );
      }
      await assertRejectsWithCode(
        () => lock.write({ ttlMs: context.ttlMs, waitMs: -1 }),
        'invalid-argument',
        'write waitMs -1',
      );
    },
  },
];
