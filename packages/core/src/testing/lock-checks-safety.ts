import assert from 'node:assert/strict';
import { monotonicNow } from '../clock.js';
import type { Lease } from '../contract.js';
import {
  acquireShort,
  assertRejectsWithCode,
  type CheckContext,
  delay,
  waitForAbort,
  within,
} from './context.js';
import type { LockCheck } from './lock-check.js';

/** How long a lease may take past its TTL to end on the backend before a check gives up. */
function expiryBudget(context: CheckContext): number {
  return context.scaled(context.ttlMs * 4 + 3_000);
}

/** A, holding `resource` with the short TTL, lets it expire; B then takes the lock over. */
async function staleHolder(context: CheckContext, label: string) {
  const [a, b, c] = [await context.client(), await context.client(), await context.client()];
  const resource = context.resource(label);
  const stale = await acquireShort(context, a, resource);
  await waitForAbort(stale.signal, expiryBudget(context), "the first holder's lease.signal");
  const current = await b.acquire(resource, { ttlMs: context.scaled(20_000), waitMs: expiryBudget(context) });
  if (context.capabilities.safeFences) {
    assert.ok(
      (current.fence as bigint) > (stale.fence as bigint),
      `new holder's fence ${current.fence} ≤ stale ${stale.fence}`,
    );
  }
  return { stale, current, other: c, resource };
}

/** Asserts the current holder still holds: its signal is live and a third client is refused. */
async function assertStillHeld(context: CheckContext, check: Awaited<ReturnType<typeof staleHolder>>) {
  assert.ok(check.current.held, 'the new holder lost its lease because of the stale holder');
  const intruder = await check.other.tryAcquire(check.resource, { ttlMs: context.ttlMs });
  if (intruder) await intruder.release();
  assert.equal(intruder, null, 'a third client got the lock the new holder still holds');
}

export const safetyChecks: readonly LockCheck[] = [
  {
    id: 'mutual-exclusion',
    title: 'mutual exclusion: concurrent clients on one resource never overlap',
    async run(context) {
      const resource = context.resource('mutex');
      const clients = await Promise.all(Array.from({ length: context.concurrency }, () => context.client()));
      let inside = 0;
      let maxInside = 0;
      const fences: unknown[] = [];
      const owners = new Set<string>();
      const turns = clients.map(async (client) => {
        const lease = await client.acquire(resource, {
          ttlMs: context.scaled(20_000),
          waitMs: context.scaled(25_000),
        });
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        fences.push(lease.fence);
        owners.add(lease.owner);
        await delay(5);
        assert.ok(lease.held, 'a holder lost its lease during a 5 ms critical section');
        // Leave before releasing: the next holder may be granted the moment the release lands.
        inside -= 1;
        await lease.release();
      });
      await within(Promise.all(turns), context.scaled(28_000), `${clients.length} clients taking turns`);
      assert.equal(maxInside, 1, `${maxInside} holders were inside the critical section at once`);
      assert.equal(fences.length, clients.length);
      assert.equal(owners.size, clients.length, 'two grants shared an owner token');
      if (context.capabilities.safeFences) assertStrictlyIncreasing(fences, 'fences in order of entry');
    },
  },
  {
    id: 'fences-increase',
    title: 'fences strictly increase across holders',
    requires: 'safeFences',
    async run(context) {
      const clients = [await context.client(), await context.client(), await context.client()];
      const resource = context.resource('fences');
      const fences: unknown[] = [];
      for (let round = 0; round < 6; round++) {
        const client = clients[round % clients.length]!;
        const lease =
          round % 2 === 0
            ? await client.acquire(resource, { ttlMs: context.scaled(10_000), waitMs: context.scaled(5_000) })
            : await client.tryAcquire(resource, { ttlMs: context.scaled(10_000) });
        assert.ok(lease, `round ${round}: tryAcquire on a free lock returned null`);
        assert.equal(typeof lease.fence, 'bigint', 'a safe fence must be a bigint');
        fences.push(lease.fence);
        await lease.release();
      }
      assertStrictlyIncreasing(fences, 'fences of successive holders');
    },
  },
  {
    id: 'stale-release-refused',
    title: "a stale holder's release is refused with NotLockHolderError and the new holder keeps the lock",
    requires: 'expiry',
    async run(context) {
      const check = await staleHolder(context, 'stale-release');
      await assertRejectsWithCode(() => check.stale.release(), 'not-holder', "the stale holder's release");
      await assertStillHeld(context, check);
      await check.current.release();
    },
  },
  {
    id: 'stale-extend-refused',
    title: "a stale holder's extend fails with LockLostError and the new holder keeps the lock",
    requires: 'expiry',
    async run(context) {
      const check = await staleHolder(context, 'stale-extend');
      await assertRejectsWithCode(
        () => check.stale.extend(context.scaled(20_000)),
        'lost',
        "the stale holder's extend",
      );
      assert.equal(check.stale.held, false, 'a refused extend revived the stale lease');
      await assertStillHeld(context, check);
      await check.current.release();
    },
  },
  {
    id: 'expiry-frees-lock',
    title: 'expiry frees the lock, never before the old lease stops being valid',
    requires: 'expiry',
    async run(context) {
      const [a, b] = [await context.client(), await context.client()];
      const resource = context.resource('expiry');
      const first = await acquireShort(context, a, resource);
      const second = await b.acquire(resource, {
        ttlMs: context.scaled(10_000),
        waitMs: expiryBudget(context),
      });
      const grantedAt = monotonicNow();
      assert.ok(
        grantedAt >= first.validUntil,
        `second holder granted ${(first.validUntil - grantedAt).toFixed(1)} ms before the first lease's validUntil`,
      );
      assert.equal(first.held, false, 'the expired lease still says it is held');
      await second.release();
    },
  },
  {
    id: 'extend-after-expiry-lost',
    title: 'extend after expiry fails with `lost`',
    requires: 'expiry',
    async run(context) {
      const client = await context.client();
      const lease = await acquireShort(context, client, context.resource('late-extend'));
      await waitForAbort(lease.signal, expiryBudget(context), 'lease.signal');
      await assertRejectsWithCode(() => lease.extend(context.scaled(10_000)), 'lost', 'extend after expiry');
    },
  },
  {
    id: 'signal-aborts-at-expiry',
    title: 'lease.signal aborts at expiry with a LockLostError',
    requires: 'expiry',
    async run(context) {
      const client = await context.client();
      const lease = await acquireShort(context, client, context.resource('signal'));
      if (monotonicNow() < lease.validUntil) {
        assert.equal(lease.signal.aborted, false, 'lease.signal was aborted while the lease was valid');
      }
      await waitForAbort(lease.signal, expiryBudget(context), 'lease.signal');
      const reason = lease.signal.reason as { code?: unknown } | undefined;
      assert.equal(reason?.code, 'lost', 'lease.signal.reason should be a LockLostError');
      assert.equal(lease.held, false);
    },
  },
  {
    id: 'extend-keeps-lock',
    title: 'extend keeps the lock past its original TTL and moves validUntil forward',
    async run(context) {
      const [a, b] = [await context.client(), await context.client()];
      const resource = context.resource('extend');
      // Twice the short TTL, extended every third of it: a stall of most of a TTL on a loaded machine
      // still leaves the extension in time, and four rounds outlast the original TTL.
      const ttlMs = context.ttlMs * 2;
      const lease = await a.acquire(resource, { ttlMs, waitMs: context.scaled(5_000) });
      const rounds = 4;
      for (let round = 0; round < rounds; round++) {
        await delay(ttlMs / 3);
        const before = lease.validUntil;
        await lease.extend(ttlMs);
        const answeredAt = monotonicNow();
        assert.ok(lease.validUntil > before, 'extend did not move validUntil forward');
        assert.ok(lease.validUntil <= answeredAt + ttlMs, 'validUntil exceeds now + ttl after extend');
        const intruder = await b.tryAcquire(resource, { ttlMs: context.ttlMs });
        if (intruder) await intruder.release();
        assert.equal(intruder, null, `another client got an extended lock in round ${round}`);
      }
      assert.ok(lease.held);
      await lease.release();
    },
  },
  {
    id: 'expired-grant-never-handed-out',
    title: 'a grant whose validity is gone on return is never handed out (1 ms TTL)',
    async run(context) {
      const [client, probe] = [await context.client(), await context.client()];
      const resource = context.resource('tiny-ttl');
      for (let round = 0; round < 6; round++) {
        let lease: Lease<bigint | undefined> | null = null;
        let failure: unknown;
        try {
          lease =
            round % 2 === 0
              ? await client.acquire(resource, { ttlMs: 1, waitMs: context.scaled(5_000) })
              : await client.tryAcquire(resource, { ttlMs: 1 });
        } catch (error) {
          failure = error;
        }
        const answeredAt = monotonicNow();
        if (lease) {
          // The promise chain between the client's own check and this line takes a few microseconds
          // (more during a GC pause), so allow 2 ms; a client that never checks is off by its RTT.
          assert.ok(
            lease.validUntil > answeredAt - 2,
            `round ${round}: handed out a lease ${(answeredAt - lease.validUntil).toFixed(2)} ms past its validUntil (return freshLease(lease) from @fencekit/core)`,
          );
          await lease.release().catch(() => {});
        } else if (failure !== undefined) {
          // Refusing a TTL this small (invalid-argument) or reporting the lapsed grant (lost) are both fine.
          assert.ok(
            typeof (failure as { code?: unknown }).code === 'string',
            `round ${round}: failed with a non-fencekit error: ${String(failure)}`,
          );
        }
        // Whatever happened, nothing may stay granted: the lock is free again within moments.
        const next = await probe.acquire(resource, {
          ttlMs: context.scaled(5_000),
          waitMs: context.scaled(5_000),
        });
        await next.release();
      }
    },
  },
  {
    id: 'validity-window',
    // The request is sent somewhere between the call and its answer, so the observable bound on
    // "validity counted from when the request was sent" is: answer time < validUntil ≤ answer time + ttl.
    title: 'validUntil is in the future and at most sentAt + ttl',
    async run(context) {
      const client = await context.client();
      const ttlMs = context.scaled(5_000);
      const checkLease = (lease: Lease<bigint | undefined>, how: string) => {
        const answeredAt = monotonicNow();
        assert.ok(lease.validUntil > answeredAt, `${how}: validUntil is already in the past`);
        assert.ok(lease.validUntil <= answeredAt + ttlMs, `${how}: validUntil exceeds sentAt + ttl`);
        assert.ok(lease.held, `${how}: lease not held`);
      };
      const acquired = await client.acquire(context.resource('validity'), { ttlMs, waitMs: ttlMs });
      checkLease(acquired, 'acquire');
      await acquired.extend(ttlMs);
      checkLease(acquired, 'extend');
      await acquired.release();
      const tried = await client.tryAcquire(context.resource('validity'), { ttlMs });
      assert.ok(tried, 'tryAcquire on a free lock returned null');
      checkLease(tried, 'tryAcquire');
      await tried.release();
    },
  },
];

function assertStrictlyIncreasing(values: readonly unknown[], what: string): void {
  for (let i = 1; i < values.length; i++) {
    const previous = values[i - 1];
    const current = values[i];
    assert.equal(typeof current, 'bigint', `${what}: fence ${String(current)} is not a bigint`);
    assert.ok(
      (current as bigint) > (previous as bigint),
      `${what}: ${values.map(String).join(', ')} is not strictly increasing`,
    );
  }
}
