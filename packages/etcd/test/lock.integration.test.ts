import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError, isFencekitError, monotonicNow, withLock } from '@fencekit/core';
import { EtcdClient, guardedPut } from '@fencekit/etcd';
import { afterEach, describe, expect, it } from 'vitest';
import { runPrefix, sharedHosts } from './support/clients.js';

const hosts = sharedHosts();
const clients: EtcdClient[] = [];
function client(options: { keepAlive?: boolean } = {}): EtcdClient {
  const c = new EtcdClient({ hosts, prefix: runPrefix, ...options });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('etcd lock', () => {
  it('grants, fences with the create revision and releases', async () => {
    const a = client();
    const lease = await a.acquire('r1', { ttlMs: 2000 });
    expect(typeof lease.fence).toBe('bigint');
    expect(lease.held).toBe(true);
    expect(await client().tryAcquire('r1', { ttlMs: 2000 })).toBeNull();
    await lease.release();
    const next = await client().acquire('r1', { ttlMs: 2000 });
    expect(next.fence).toBeGreaterThan(lease.fence);
    await next.release();
  });

  it('hands over to waiters in arrival order (order of their keys in etcd)', async () => {
    const a = client();
    const holder = await a.acquire('fifo', { ttlMs: 2000 });
    const queued = async () => (await a.etcd.getAll().prefix(`${runPrefix}/locks/fifo/`).keys()).length;
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (const i of [0, 1, 2]) {
      waiters.push(
        client()
          .acquire('fifo', { ttlMs: 2000, waitMs: 10_000 })
          .then(async (lease) => {
            order.push(i);
            await lease.release();
          }),
      );
      // Arrival is when the waiter's key lands; wait for it before the next one starts.
      for (let tries = 0; (await queued()) < i + 2 && tries < 200; tries++) {
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    await holder.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2]);
  });

  it('times out and leaves nothing queued', async () => {
    const a = client();
    const lease = await a.acquire('to', { ttlMs: 2000 });
    await expect(client().acquire('to', { ttlMs: 2000, waitMs: 200 })).rejects.toSatisfy((e) =>
      isFencekitError(e, 'timeout'),
    );
    const keys = await a.etcd.getAll().prefix(`${runPrefix}/locks/to/`).keys();
    expect(keys).toHaveLength(1);
    await lease.release();
  });

  it('a leftover key of its own session is replaced: fresh create revision, one key, granted at once', async () => {
    const a = client();
    const first = await a.acquire('leftover', { ttlMs: 2000 });
    const { key, leaseId } = first;
    await first.release();
    // As if an earlier put's answer had been lost: the session's key is back in the queue.
    await a.etcd.put(key).value('leftover').lease(leaseId);
    const leftover = BigInt((await a.etcd.kv.range({ key: Buffer.from(key) })).kvs[0]?.create_revision ?? 0);
    const second = await a.acquire('leftover', { ttlMs: 2000, waitMs: 2000 });
    expect(second.key).toBe(key);
    expect(second.fence).toBeGreaterThan(leftover);
    expect(await a.etcd.getAll().prefix(`${runPrefix}/locks/leftover/`).keys()).toEqual([key]);
    await second.release();
  });

  it('a guarded write is refused once the lease is released', async () => {
    const a = client();
    const lease = await a.acquire('g', { ttlMs: 2000 });
    await guardedPut(lease, `${runPrefix}/data/g`, 'one');
    await lease.release();
    const other = await client().acquire('g', { ttlMs: 2000 });
    await expect(guardedPut(lease, `${runPrefix}/data/g`, 'stale')).rejects.toSatisfy((e) =>
      isFencekitError(e, 'stale-fence'),
    );
    expect(await a.etcd.get(`${runPrefix}/data/g`).string()).toBe('one');
    await other.release();
  });
});

describe('etcd lock: liveness and misuse', () => {
  it('lease.signal aborts as soon as a keep-alive is refused (lease revoked behind its back)', async () => {
    const a = client();
    const lease = await a.acquire('revoked', { ttlMs: 3_000 });
    const startedAt = monotonicNow();
    await a.etcd.leaseClient.leaseRevoke({ ID: lease.leaseId });
    await new Promise<void>((resolve) =>
      lease.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    // The next keep-alive (every TTL/3) hears "TTL 0"; no waiting for the TTL to run out.
    expect(monotonicNow() - startedAt).toBeLessThan(3_000);
    expect(isFencekitError(lease.signal.reason, 'lost')).toBe(true);
    const next = await client().acquire('revoked', { ttlMs: 3_000, waitMs: 5_000 });
    expect(next.fence).toBeGreaterThan(lease.fence);
    await next.release();
  });

  it('withLock from core runs the work under an etcd lease and releases it', async () => {
    const a = client();
    const fence = await withLock(a, 'with-lock', async (lease) => lease.fence, { ttlMs: 2_000 });
    expect(typeof fence).toBe('bigint');
    expect(await client().tryAcquire('with-lock', { ttlMs: 2_000 })).not.toBeNull();
  });

  it('extend beyond the session TTL is an InvalidArgumentError and leaves the lease held', async () => {
    const lease = await client().acquire('extend-too-far', { ttlMs: 2_000 });
    await expect(lease.extend(60_000)).rejects.toSatisfy((e) => isFencekitError(e, 'invalid-argument'));
    expect(lease.held).toBe(true);
    await lease.extend(2_000);
    await lease.release();
  });

  it('an unreachable etcd gives a typed error within the wait, and close() returns', async () => {
    const dead = new EtcdClient({ hosts: ['127.0.0.1:9'], callTimeoutMs: 1_000, dialTimeoutMs: 1_000 });
    const error = await dead.acquire('nowhere', { ttlMs: 2_000, waitMs: 3_000 }).catch((e: unknown) => e);
    expect(
      isFencekitError(error, 'timeout') || isFencekitError(error, 'backend-unavailable'),
      String(error),
    ).toBe(true);
    await dead.close();
  });

  it('a process that used the client exits on its own after close()', async () => {
    const script = fileURLToPath(new URL('./support/close-process.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, hosts.join(','), runPrefix], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = once(child, 'exit');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    clearTimeout(timer);
    expect(output).toContain('closed');
    expect(signal, 'the process had to be killed: something kept it alive after close()').toBeNull();
    expect(code).toBe(0);
  });

  it('keepAlive: false — the lock lasts ttlMs unless extended; a waiter keeps its place past one TTL', async () => {
    const a = client({ keepAlive: false });
    const held = await a.acquire('per-grant', { ttlMs: 2_000 });
    const waiting = client({ keepAlive: false }).acquire('per-grant', { ttlMs: 2_000, waitMs: 20_000 });
    const queued = async () => (await a.etcd.getAll().prefix(`${runPrefix}/locks/per-grant/`).keys()).length;
    for (let tries = 0; (await queued()) < 2 && tries < 200; tries++)
      await new Promise((r) => setTimeout(r, 25));
    const marker = BigInt(
      (await a.etcd.kv.range({ key: Buffer.from(`${runPrefix}/marker`) })).header.revision,
    );
    // Twice the TTL, held only by extensions; the waiter's own lease is kept alive while it waits.
    for (let round = 0; round < 7; round++) {
      await new Promise((r) => setTimeout(r, 600));
      await held.extend(2_000);
    }
    await held.release();
    const next = await waiting;
    expect(next.fence, 'the waiter lost its place in the queue').toBeLessThanOrEqual(marker);
    // Not extended: the grant ends by itself within its TTL, and the lock is free again.
    await new Promise<void>((resolve) =>
      next.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    const probe = client();
    let after = await probe.tryAcquire('per-grant', { ttlMs: 2_000 });
    // The ended grant's lease is revoked in the background (or expires on the server) right after.
    for (let tries = 0; !after && tries < 40; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await probe.tryAcquire('per-grant', { ttlMs: 2_000 });
    }
    expect(after).not.toBeNull();
  });

  it('keepAlive: false — an extend shorter than the session TTL ends the lock at its own window', async () => {
    const a = client({ keepAlive: false });
    // A 4 s session; the holder then asks for 1 s only. Nobody reads `held.signal`, which would arm a
    // timer of its own: the lease must end on time without one.
    const held = await a.acquire('short-extend', { ttlMs: 4_000 });
    const waiting = client({ keepAlive: false }).acquire('short-extend', { ttlMs: 2_000, waitMs: 10_000 });
    const extendedAt = monotonicNow();
    await held.extend(1_000);
    const next = await waiting;
    const waitedMs = monotonicNow() - extendedAt;
    // Ended at 1 s (plus the revoke's round trip), not when the 4 s session would have run out.
    expect(waitedMs).toBeGreaterThanOrEqual(900);
    expect(waitedMs).toBeLessThan(3_000);
    expect(held.held).toBe(false);
    expect(next.fence).toBeGreaterThan(held.fence);
    await next.release();
  });

  it('bad options are InvalidArgumentErrors', () => {
    expect(() => new EtcdClient({ hosts: [] })).toThrow(InvalidArgumentError);
    expect(() => new EtcdClient({ hosts: ['127.0.0.1:2379'], prefix: '' })).toThrow(InvalidArgumentError);
    expect(() => client().election('', { ttlMs: 1_000 })).toThrow(InvalidArgumentError);
  });
});
