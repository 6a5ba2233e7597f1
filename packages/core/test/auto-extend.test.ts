import { autoExtend, createMemoryLockClient, MemoryLockServer, sleep } from '@fencekit/core';
import { describe, expect, it } from 'vitest';

describe('autoExtend', () => {
  it('keeps a lease alive until stopped, then lets it expire', async () => {
    const server = new MemoryLockServer();
    const client = createMemoryLockClient({ server });
    // Generous TTL: the machine is shared, and a timer late by a third of the TTL must not flake this.
    const lease = await client.acquire('kept', { ttlMs: 1_200 });
    const handle = autoExtend(lease, { ttlMs: 1_200 });
    await sleep(2_500);
    expect(lease.held).toBe(true);
    expect(handle.signal.aborted).toBe(false);
    await handle.stop();
    await handle.stop();
    await sleep(1_600);
    expect(lease.held).toBe(false);
    expect(server.holder('kept')).toBeNull();
    await client.close();
  });

  it('aborts its signal when the lease is released or the caller aborts', async () => {
    const client = createMemoryLockClient({ server: new MemoryLockServer() });
    const lease = await client.acquire('released', { ttlMs: 1_000 });
    const handle = autoExtend(lease, { ttlMs: 1_000 });
    await lease.release();
    expect(handle.signal.aborted).toBe(true);
    expect(handle.signal.reason).toMatchObject({ code: 'lost' });

    const controller = new AbortController();
    const second = await client.acquire('cancelled', { ttlMs: 1_000 });
    {
      await using cancelled = autoExtend(second, { ttlMs: 1_000, signal: controller.signal });
      controller.abort('caller');
      expect(cancelled.signal.reason).toBe('caller');
    }
    await client.close();
  });

  it('refuses a margin that leaves no time to extend', async () => {
    const client = createMemoryLockClient({ server: new MemoryLockServer() });
    const lease = await client.acquire('margin', { ttlMs: 300 });
    expect(() => autoExtend(lease, { ttlMs: 300, safetyMarginMs: 250 })).toThrow('Invalid safetyMarginMs');
    expect(() => autoExtend(lease, { ttlMs: 300, extendEveryFraction: 1.5 })).toThrow(
      'Invalid extendEveryFraction',
    );
    await client.close();
  });
});
