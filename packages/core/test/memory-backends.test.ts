import {
  createMemoryElectionClient,
  createMemoryLockClient,
  MemoryElectionHub,
  MemoryLockServer,
  sleep,
} from '@fencekit/core';
import { describe, expect, it } from 'vitest';

describe('MemoryLockServer', () => {
  it('forgets idle resources but never reuses a fence', async () => {
    const server = new MemoryLockServer();
    const client = createMemoryLockClient({ server });
    const first = await client.acquire('r', { ttlMs: 1_000 });
    const waiting = client.acquire('r', { ttlMs: 1_000, waitMs: 50 }).catch((e: unknown) => e);
    expect(server.activeResources).toBe(1);
    expect(await waiting).toMatchObject({ code: 'timeout' });
    await first.release();
    expect(server.activeResources).toBe(0);
    const second = await client.acquire('r', { ttlMs: 1_000 });
    expect(second.fence).toBe(first.fence + 1n);
    await client.close();
    expect(server.activeResources).toBe(0);
  });

  it('hands over on expiry to the oldest waiter, with validity counted from the hand-over', async () => {
    const server = new MemoryLockServer();
    const [a, b] = [createMemoryLockClient({ server }), createMemoryLockClient({ server })];
    await a.acquire('r', { ttlMs: 100 });
    const waitingSince = performance.now();
    const lease = await b.acquire('r', { ttlMs: 1_000, waitMs: 2_000 });
    expect(lease.validUntil).toBeGreaterThan(waitingSince + 1_000);
    expect(server.holder('r')?.owner).toBe(lease.owner);
    await Promise.all([a.close(), b.close()]);
  });
});

describe('createMemoryElectionClient', () => {
  it('gives elections on one hub and validates ttlMs', async () => {
    const elections = createMemoryElectionClient({ hub: new MemoryElectionHub() });
    expect(() => elections.election('e', { ttlMs: 0 })).toThrow('Invalid ttlMs');
    expect(() => elections.election('', { ttlMs: 100 })).toThrow('Invalid resource');
    const [a, b] = [elections.election('e', { ttlMs: 100 }), elections.election('e', { ttlMs: 100 })];
    const leadership = await a.campaign('a');
    expect(await b.leader()).toEqual({ candidate: 'a', term: 1n });
    await expect(b.campaign('b', { waitMs: 20 })).rejects.toMatchObject({ code: 'timeout' });
    await a.close();
    expect(leadership.isLeader).toBe(false);
    await sleep(1);
    expect(await b.leader()).toBeNull();
    await expect(a.campaign('again')).rejects.toMatchObject({ code: 'closed' });
    await expect(b.campaign('')).rejects.toMatchObject({ code: 'invalid-argument' });
    await b.close();
  });
});
