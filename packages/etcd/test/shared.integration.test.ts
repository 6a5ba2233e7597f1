import { EtcdSemaphoreLease, EtcdSharedLockClient, guardedPut } from '@fencekit/etcd';
import { afterEach, describe, expect, it } from 'vitest';
import { newClient, runPrefix, sharedHosts } from './support/clients.js';

const clients: EtcdSharedLockClient[] = [];
function client(): EtcdSharedLockClient {
  const c = new EtcdSharedLockClient({ hosts: sharedHosts(), prefix: runPrefix });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

function unique(label: string): string {
  return `shared-${label}/${Math.random().toString(36).slice(2)}`;
}

const base = (name: string) => `${runPrefix}/semaphores/${encodeURIComponent(name)}/`;

/** The keys under `prefix`, oldest first, with the etcd lease each is attached to. */
async function keysUnder(prefix: string): Promise<{ key: string; lease: string }[]> {
  const admin = newClient();
  try {
    const { kvs } = await admin.etcd.kv.range({
      key: Buffer.from(prefix),
      range_end: Buffer.from(
        prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1),
      ),
    });
    return kvs
      .sort((a, b) => Number(BigInt(a.create_revision) - BigInt(b.create_revision)))
      .map((kv) => ({ key: kv.key.toString(), lease: kv.lease }));
  } finally {
    await admin.close();
  }
}

/** What an operator (or etcd at expiry) does to a session: revoke its lease, deleting its keys. */
async function revoke(lease: string): Promise<void> {
  const admin = newClient();
  try {
    await admin.etcd.leaseClient.leaseRevoke({ ID: lease });
  } finally {
    await admin.close();
  }
}

async function eventually(check: () => Promise<boolean>, withinMs: number, what: string): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const long = { ttlMs: 10_000, waitMs: 20_000 };

describe('EtcdSharedLockClient on a real cluster', () => {
  it('a holder whose session ends gives its permits to the waiter, and its lease says it is lost', async () => {
    const name = unique('ended-holder');
    const holder = await client()
      .semaphore(name, { permits: 2 })
      .acquire({ ...long, permits: 2 });
    const waiting = client().semaphore(name, { permits: 2 }).acquire(long);
    await eventually(async () => (await keysUnder(`${base(name)}permits/`)).length === 2, 5_000, 'queued');
    if (!(holder instanceof EtcdSemaphoreLease)) throw new Error('not an etcd semaphore lease');
    await revoke(holder.leaseId);
    const next = await waiting;
    expect(next.fence).toBeGreaterThan(holder.fence);
    // Its keep-alive learns the session is gone within a keep-alive interval (a third of the TTL).
    await eventually(async () => holder.signal.aborted, 15_000, 'the holder noticed');
    expect(holder.held).toBe(false);
    await next.release();
  });

  it('a waiter whose predecessor (the first waiter) loses its session is not starved', async () => {
    const name = unique('lost-head');
    const holder = await client().semaphore(name, { permits: 1 }).acquire(long);
    const head = client()
      .semaphore(name, { permits: 1 })
      .acquire(long)
      .catch((error: unknown) => error);
    await eventually(
      async () => (await keysUnder(`${base(name)}permits/`)).length === 2,
      5_000,
      'first waiter queued',
    );
    const behind = client().semaphore(name, { permits: 1 }).acquire(long);
    await eventually(
      async () => (await keysUnder(`${base(name)}permits/`)).length === 3,
      5_000,
      'second queued',
    );
    const [, headKey] = await keysUnder(`${base(name)}permits/`);
    await revoke(headKey!.lease);
    await holder.release();
    // The head rejoins at the back on a new session: the waiter that was behind it goes first.
    const next = await behind;
    expect(next.fence).toBeGreaterThan(holder.fence);
    await next.release();
    const late = await head;
    if (late && typeof late === 'object' && 'release' in late)
      await (late as { release(): Promise<void> }).release();
  });

  it('guardedPut works on a write lease: applied while held, refused by etcd once released', async () => {
    const lock = client().readWriteLock(unique('guarded'));
    const key = `${runPrefix}/data/${Math.random().toString(36).slice(2)}`;
    const writer = await lock.write(long);
    await guardedPut(writer, key, '41');
    await writer.release();
    const refused = await guardedPut(writer, key, '40').catch((error: unknown) => error);
    expect((refused as { code?: string }).code).toBe('stale-fence');
  });

  it('a try that does not fit has taken its keys out by the time it answers null', async () => {
    const name = unique('try-leaves');
    const admin = newClient();
    try {
      const list = async (prefix: string) =>
        (
          await admin.etcd
            .getAll()
            .prefix(`${base(name)}${prefix}`)
            .keys()
        ).length;
      const holder = await client().semaphore(name, { permits: 2 }).acquire(long);
      const other = client().semaphore(name, { permits: 2 });
      for (let round = 0; round < 5; round++) {
        expect(await other.tryAcquire({ ttlMs: 10_000, permits: 2 })).toBeNull();
        expect(await list('permits/')).toBe(1);
      }
      await holder.release();
    } finally {
      await admin.close();
    }
  });

  it('releasing a lapsed grant resolves, and leaves the new holder alone', async () => {
    const name = unique('lapsed');
    const lapsing = new EtcdSharedLockClient({ hosts: sharedHosts(), prefix: runPrefix, keepAlive: false });
    clients.push(lapsing);
    // keepAlive: false: the grant ends 2 s (etcd's minimum TTL) after it, as nothing extends it.
    const old = await lapsing.semaphore(name, { permits: 1 }).acquire({ ttlMs: 2_000, waitMs: 5_000 });
    const next = await client().semaphore(name, { permits: 1 }).acquire(long);
    expect(old.held).toBe(false);
    await old.release();
    expect(next.held).toBe(true);
    expect(await client().semaphore(name, { permits: 1 }).tryAcquire({ ttlMs: 10_000 })).toBeNull();
    await next.release();
  });

  it('close() of a waiting client leaves no key behind', async () => {
    const name = unique('close-head');
    const holder = await client().semaphore(name, { permits: 1 }).acquire(long);
    const waiterClient = client();
    const waiting = waiterClient
      .semaphore(name, { permits: 1 })
      .acquire(long)
      .catch((error: unknown) => error);
    await eventually(
      async () => (await keysUnder(`${base(name)}permits/`)).length === 2,
      5_000,
      'waiter queued',
    );
    await waiterClient.close();
    expect(((await waiting) as { code?: string }).code).toBe('closed');
    expect(await keysUnder(`${base(name)}permits/`)).toHaveLength(1);
    await holder.release();
    expect(await keysUnder(`${base(name)}permits/`)).toEqual([]);
  });
});

describe('EtcdSharedLockClient permit queue', () => {
  it('waiters of one client share its prefix watch: every release is counted, never more than the permits', async () => {
    const name = unique('one-watch');
    const [a, b] = [client(), client()];
    let holding = 0;
    let most = 0;
    let grants = 0;
    // 2 clients × 6 waiters each, 3 grants apiece, on 2 permits: bounded (36 grants, each wait ≤ 20 s).
    await Promise.all(
      [a, b].flatMap((c) =>
        Array.from({ length: 6 }, async () => {
          const semaphore = c.semaphore(name, { permits: 2 });
          for (let i = 0; i < 3; i++) {
            const lease = await semaphore.acquire(long);
            holding += 1;
            most = Math.max(most, holding);
            grants += 1;
            await new Promise((r) => setTimeout(r, 2));
            holding -= 1;
            await lease.release();
          }
        }),
      ),
    );
    expect(grants).toBe(36);
    expect(most).toBeLessThanOrEqual(2);
    expect(await keysUnder(`${base(name)}permits/`)).toEqual([]);
  });
});

describe('EtcdSharedLockClient errors', () => {
  it("a waiter that times out in the queue reports the caller's waitMs, not what was left of it", async () => {
    const [a, b, c] = [client(), client(), client()];
    const name = unique('timeout-wait-ms');
    const held = await a.semaphore(name, { permits: 1 }).acquire({ ttlMs: 20_000 });
    // b waits first, so c times out in the queue behind it.
    const ahead = b
      .semaphore(name, { permits: 1 })
      .acquire({ ttlMs: 5_000, waitMs: 3_000 })
      .catch((e: unknown) => e);
    await eventually(async () => (await keysUnder(`${base(name)}permits/`)).length === 2, 5_000, 'b queued');
    const error = await c
      .semaphore(name, { permits: 1 })
      .acquire({ ttlMs: 5_000, waitMs: 1_000 })
      .catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('timeout');
    expect((error as { waitMs?: number }).waitMs).toBe(1_000);
    expect((error as Error).message).toContain('after 1000 ms');
    expect(((await ahead) as { waitMs?: number }).waitMs).toBe(3_000);
    await held.release();
  });
});
