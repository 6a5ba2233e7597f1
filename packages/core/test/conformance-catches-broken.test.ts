import {
  createMemoryLockClient,
  InvalidArgumentError,
  type LockClient,
  type MemoryCandidacy,
  MemoryElection,
  MemoryElectionHub,
  MemoryLockServer,
  type MemoryReleaseOutcome,
  sleep,
} from '@fencekit/core';
import { runElectionCheck, runLockCheck } from '@fencekit/core/testing';
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

/** Hands leases out after a 20 ms delay without checking they are still valid. */
function slowReturnClient(server: MemoryLockServer): LockClient<bigint> {
  const inner = createMemoryLockClient({ server });
  const late = async <T>(value: T): Promise<T> => {
    await sleep(20);
    return value;
  };
  return {
    backend: 'slow-return',
    capabilities: inner.capabilities,
    acquire: (resource, options) => inner.acquire(resource, options).then(late),
    tryAcquire: (resource, options) => inner.tryAcquire(resource, options).then(late),
    close: () => inner.close(),
  };
}

/**
 * Refuses TTLs under 10 ms (so the 1 ms check only ever sees InvalidArgumentError) and hands other
 * leases out 25 ms late without checking them: a short-TTL grant is then dead on return, the way
 * etcd's were when their session's validity ran out on a busy event loop.
 */
function shortTtlLateClient(server: MemoryLockServer): LockClient<bigint> {
  const inner = slowReturnClient(server);
  const refuseTiny = (ttlMs: number) => {
    if (ttlMs < 10) throw new InvalidArgumentError('ttlMs', ttlMs, 'at least 10 ms');
  };
  return {
    ...inner,
    acquire: async (resource, options) => {
      refuseTiny(options.ttlMs);
      await sleep(5);
      return inner.acquire(resource, options);
    },
    tryAcquire: async (resource, options) => {
      refuseTiny(options.ttlMs);
      await sleep(5);
      return inner.tryAcquire(resource, options);
    },
  };
}

/** An election hub that elects every candidate at once (no exclusion), with distinct terms. */
class EveryoneLeadsHub extends MemoryElectionHub {
  #term = 0n;
  override campaign(_name: string, candidacy: MemoryCandidacy): () => boolean {
    this.#term += 1n;
    candidacy.onElected(this.#term);
    return () => false;
  }
}

/** An election hub where a leader that steps down keeps its seat: nobody is elected after it. */
class SeatKeepingHub extends MemoryElectionHub {
  override resign(): boolean {
    return true;
  }
}

const options = (server: MemoryLockServer) => ({
  createClient: async () => createMemoryLockClient({ server }),
  ttlMs: 300,
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

  it('fails a client that hands out a lease whose validity is already gone', async () => {
    await expect(
      runLockCheck('expired-grant-never-handed-out', {
        createClient: async () => slowReturnClient(new MemoryLockServer()),
      }),
    ).rejects.toThrow(/handed out a lease .* past its validUntil/);
  });

  it('fails a client that hands out dead short-TTL leases although it passes the 1 ms check', async () => {
    const broken = { createClient: async () => shortTtlLateClient(new MemoryLockServer()) };
    await runLockCheck('expired-grant-never-handed-out', broken);
    await expect(runLockCheck('fresh-grants-under-load', broken)).rejects.toThrow(
      /handed out a lease .* past its validUntil/,
    );
  });

  it('the reference client passes the short-TTL check on a busy event loop', async () => {
    await runLockCheck('fresh-grants-under-load', options(new MemoryLockServer()));
  });

  it('fails an election that lets several candidates lead at once', async () => {
    const hub = new EveryoneLeadsHub();
    await expect(
      runElectionCheck('one-leader', { createElection: async (name) => new MemoryElection(name, hub) }),
    ).rejects.toThrow(/leaders at once/);
  });

  it('fails an election whose leader keeps its seat after losing its session', async () => {
    const hub = new SeatKeepingHub();
    await expect(
      runElectionCheck('session-loss-hands-over', {
        createElection: async (name) => new MemoryElection(name, hub),
        loseSession: (participant) => participant.close(),
      }),
    ).rejects.toThrow(/the next candidate after the leader lost its session: did not settle/);
  });

  it('refuses to run the session-loss check without a way to lose a session', () => {
    const hub = new MemoryElectionHub();
    expect(() =>
      runElectionCheck('session-loss-hands-over', {
        createElection: async (name) => new MemoryElection(name, hub),
      }),
    ).toThrow(/needs the loseSession option/);
  });

  it('names the known checks when asked for an unknown one', () => {
    expect(() => runLockCheck('nope', options(new MemoryLockServer()))).toThrow(/known: mutual-exclusion/);
  });
});
