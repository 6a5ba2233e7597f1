import {
  createMemoryLockClient,
  isFencekitError,
  type LockClient,
  ManagedLease,
  type MemoryGrant,
  MemoryLockServer,
  type MemoryReleaseOutcome,
  monotonicNow,
  sleep,
  withLock,
} from '@fencekit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Every extension is refused: the backend says the grant is gone. */
class RefusingExtendServer extends MemoryLockServer {
  override extend(): MemoryGrant | null {
    return null;
  }
}

/** Every extension fails as if the backend were unreachable (transient: retried). */
class UnreachableExtendServer extends MemoryLockServer {
  override extend(): MemoryGrant | null {
    throw new Error('connection reset');
  }
}

/** Release always reports another holder (and keeps the grant until it expires). */
class ForeignHolderServer extends MemoryLockServer {
  override release(): MemoryReleaseOutcome {
    return 'held-by-other';
  }
}

/** A backend that stopped answering: extend and release never settle (extend ignores its signal). */
function unresponsiveClient(): LockClient<bigint> {
  const never = () => new Promise<void>(() => {});
  const grant = (resource: string, ttlMs: number) =>
    new ManagedLease<bigint>({
      resource,
      owner: 'unresponsive-owner-0000000000000',
      fence: 1n,
      sentAt: monotonicNow(),
      ttlMs,
      operations: { extend: never, release: never },
    });
  return {
    backend: 'unresponsive',
    capabilities: { safeFences: true, fair: false, faultTolerant: false },
    acquire: async (resource, options) => grant(resource, options.ttlMs),
    tryAcquire: async (resource, options) => grant(resource, options.ttlMs),
    close: async () => {},
  };
}

/** Resolves with the abort reason once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  );
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('withLock', () => {
  it('runs fn under the lock, returns its result and releases', async () => {
    const server = new MemoryLockServer();
    const client = createMemoryLockClient({ server });
    const result = await withLock(
      client,
      'job',
      async (lease, signal) => {
        expect(server.holder('job')?.owner).toBe(lease.owner);
        expect(lease.fence).toBe(1n);
        expect(signal.aborted).toBe(false);
        return 42;
      },
      { ttlMs: 1_000 },
    );
    expect(result).toBe(42);
    expect(server.holder('job')).toBeNull();
    await client.close();
  });

  it('extends the lease while fn runs past several TTLs', async () => {
    const server = new MemoryLockServer();
    const [client, rival] = [createMemoryLockClient({ server }), createMemoryLockClient({ server })];
    // A TTL long enough that a stall of several hundred ms on a loaded machine cannot cost the lease.
    const ttlMs = 1_200;
    const result = await withLock(
      client,
      'long-job',
      async (lease, signal) => {
        const firstValidUntil = lease.validUntil;
        for (let i = 0; i < 5; i++) {
          await sleep(ttlMs / 2);
          expect(await rival.tryAcquire('long-job', { ttlMs })).toBeNull();
        }
        expect(lease.validUntil).toBeGreaterThan(firstValidUntil + ttlMs);
        expect(signal.aborted).toBe(false);
        return 'done';
      },
      { ttlMs },
    );
    expect(result).toBe('done');
    expect(server.holder('long-job')).toBeNull();
    await Promise.all([client.close(), rival.close()]);
  });

  it('releases when fn throws and rethrows its error', async () => {
    const server = new MemoryLockServer();
    const client = createMemoryLockClient({ server });
    const boom = new Error('boom');
    await expect(
      withLock(
        client,
        'fails',
        () => {
          throw boom;
        },
        { ttlMs: 1_000 },
      ),
    ).rejects.toBe(boom);
    expect(server.holder('fails')).toBeNull();
    await client.close();
  });

  it('aborts fn when an extension is refused, long before expiry', async () => {
    const server = new RefusingExtendServer();
    const client = createMemoryLockClient({ server });
    const ttlMs = 1_500; // generous: the abort is due at ttl/3, and a loaded machine may stall for a while
    let abortedAt = 0;
    let validUntil = 0;
    const run = withLock(
      client,
      'refused',
      async (lease, signal) => {
        validUntil = lease.validUntil;
        const reason = await aborted(signal);
        abortedAt = monotonicNow();
        throw reason;
      },
      { ttlMs },
    );
    const error = await run.catch((e: unknown) => e);
    expect(isFencekitError(error, 'lost')).toBe(true);
    // The first extension is due at ttl/3; it is refused, so the abort comes then, not at expiry.
    expect(abortedAt).toBeLessThan(validUntil);
    expect(server.holder('refused')).toBeNull();
    await client.close();
  });

  it('aborts fn a safety margin before expiry when extensions keep failing', async () => {
    const server = new UnreachableExtendServer();
    const client = createMemoryLockClient({ server });
    const retries: unknown[] = [];
    let abortedAt = 0;
    let validUntil = 0;
    const error = await withLock(
      client,
      'unreachable',
      async (lease, signal) => {
        validUntil = lease.validUntil;
        const reason = await aborted(signal);
        abortedAt = monotonicNow();
        expect(lease.held).toBe(true);
        throw reason;
      },
      { ttlMs: 1_500, safetyMarginMs: 600, onRetry: (e) => retries.push(e) },
    ).catch((e: unknown) => e);
    expect(isFencekitError(error, 'lost')).toBe(true);
    expect((error as Error).message).toMatch(/no extension landed 600 ms before expiry/);
    expect(retries.length).toBeGreaterThan(0);
    expect(abortedAt).toBeLessThan(validUntil);
    expect(server.holder('unreachable')).toBeNull();
    await client.close();
  });

  it('rejects with LockLostError when fn ignores its aborted signal and returns', async () => {
    const client = createMemoryLockClient({ server: new RefusingExtendServer() });
    await expect(
      withLock(client, 'ignored', () => sleep(400).then(() => 'late'), { ttlMs: 300 }),
    ).rejects.toMatchObject({ code: 'lost' });
    await client.close();
  });

  it("passes the caller's abort to fn and still releases", async () => {
    const server = new MemoryLockServer();
    const client = createMemoryLockClient({ server });
    const controller = new AbortController();
    const stop = new Error('shutting down');
    const run = withLock(
      client,
      'cancelled',
      async (_lease, signal) => {
        setTimeout(() => controller.abort(stop), 20);
        throw await aborted(signal);
      },
      { ttlMs: 1_000, signal: controller.signal },
    );
    await expect(run).rejects.toBe(stop);
    expect(server.holder('cancelled')).toBeNull();
    await client.close();
  });

  it('returns the result and reports a failed release to onReleaseError', async () => {
    const client = createMemoryLockClient({ server: new ForeignHolderServer() });
    const errors: unknown[] = [];
    const result = await withLock(client, 'foreign', () => 'ok', {
      ttlMs: 200,
      onReleaseError: (e) => errors.push(e),
    });
    expect(result).toBe('ok');
    expect(errors).toHaveLength(1);
    expect(isFencekitError(errors[0], 'not-holder')).toBe(true);
    await client.close();
  });

  it('returns within bounded time when the backend stops answering extend and release', async () => {
    const errors: unknown[] = [];
    const started = monotonicNow();
    const result = await withLock(unresponsiveClient(), 'silent', () => sleep(200).then(() => 'ok'), {
      ttlMs: 300,
      onReleaseError: (e) => errors.push(e),
    });
    expect(result).toBe('ok');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'indeterminate', operation: 'release' });
    // 200 ms of work, at most one TTL for the hung extension and one for the hung release.
    expect(monotonicNow() - started).toBeLessThan(200 + 300 + 300 + 1_000);
  });

  it('refuses bad options before taking the lock', async () => {
    const server = new MemoryLockServer();
    const client = createMemoryLockClient({ server });
    const bad = [
      { ttlMs: 0 },
      { ttlMs: 1_000, extendEveryFraction: 0 },
      { ttlMs: 1_000, extendEveryFraction: 1 },
      { ttlMs: 1_000, safetyMarginMs: -1 },
      { ttlMs: 1_000, safetyMarginMs: 900 },
    ];
    for (const options of bad) {
      await expect(withLock(client, 'bad', () => 1, options)).rejects.toMatchObject({
        code: 'invalid-argument',
      });
      expect(server.holder('bad')).toBeNull();
    }
    await expect(withLock(client, 'bad', 'nope' as never, { ttlMs: 100 })).rejects.toMatchObject({
      code: 'invalid-argument',
    });
    await client.close();
  });

  it('fails with LockTimeoutError when the lock stays held past waitMs', async () => {
    const server = new MemoryLockServer();
    const [holder, waiter] = [createMemoryLockClient({ server }), createMemoryLockClient({ server })];
    const lease = await holder.acquire('busy', { ttlMs: 5_000 });
    let ran = false;
    await expect(
      withLock(
        waiter,
        'busy',
        () => {
          ran = true;
        },
        { ttlMs: 1_000, waitMs: 50 },
      ),
    ).rejects.toMatchObject({ code: 'timeout' });
    expect(ran).toBe(false);
    await lease.release();
    await Promise.all([holder.close(), waiter.close()]);
  });
});
