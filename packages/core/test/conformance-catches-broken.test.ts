import { createMemoryLockClient, MemoryLockServer, type MemoryReleaseOutcome } from '@fencekit/core';
import { runLockCheck } from '@fencekit/core/testing';
import { describe, expect, it } from 'vitest';

/** A server whose release ignores the owner: any caller's release frees whoever holds the lock. */
class OwnerBlindServer extends MemoryLockServer {
  override release(resource: string, owner: string): MemoryReleaseOutcome {
    return super.release(resource, this.holder(resource)?.owner ?? owner);
  }
}

/** A server that hands out the same fence to every holder. */
class FrozenFenceServer extends MemoryLockServer {
  override tryGrant(resource: string, owner: string, ttlMs: number) {
    const grant = super.tryGrant(resource, owner, ttlMs);
    return grant && { ...grant, fence: 1n };
  }
}

const options = (server: MemoryLockServer) => ({
  createClient: async () => createMemoryLockClient({ server }),
  ttlMs: 100,
});

describe('the conformance suite catches broken clients', () => {
  it('the reference client passes the stale-release check', async () => {
    await runLockCheck('stale-release-refused', options(new MemoryLockServer()));
  });

  it('fails a client whose release ignores the owner', async () => {
    await expect(runLockCheck('stale-release-refused', options(new OwnerBlindServer()))).rejects.toThrow(
      /stale holder's release: expected a "not-holder" error, but it succeeded/,
    );
  });

  it('fails a client that grants the same fence twice', async () => {
    await expect(runLockCheck('fences-increase', options(new FrozenFenceServer()))).rejects.toThrow(
      /not strictly increasing/,
    );
  });

  it('names the known checks when asked for an unknown one', () => {
    expect(() => runLockCheck('nope', options(new MemoryLockServer()))).toThrow(/known: mutual-exclusion/);
  });
});
