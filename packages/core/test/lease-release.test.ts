import { describe, expect, it } from 'vitest';
import { monotonicNow } from '../src/clock.js';
import { BackendUnavailableError, isFencekitError, NotLockHolderError } from '../src/errors.js';
import { ManagedLease } from '../src/lease.js';

/** A lease whose backend release answers with the queued outcomes in turn (then succeeds). */
function leaseReleasing(outcomes: (Error | 'ok')[]) {
  const sent: number[] = [];
  const lease = new ManagedLease<bigint>({
    resource: 'r',
    owner: 'o',
    fence: 1n,
    sentAt: monotonicNow(),
    ttlMs: 10_000,
    lazyExpiry: true,
    operations: {
      extend: async () => {},
      release: async () => {
        sent.push(monotonicNow());
        await new Promise((resolve) => setTimeout(resolve, 5));
        const outcome = outcomes.shift() ?? 'ok';
        if (outcome !== 'ok') throw outcome;
      },
    },
  });
  return { lease, sent };
}

const unreachable = () => new BackendUnavailableError('test', 'unreachable');

describe('ManagedLease.release', () => {
  it('a release that failed (backend unreachable) can be retried, and the retry really sends again', async () => {
    const { lease, sent } = leaseReleasing([unreachable()]);
    await expect(lease.release()).rejects.toSatisfy((e) => isFencekitError(e, 'backend-unavailable'));
    // The lease ended with the failed release: nobody may act on it any more.
    expect(lease.held).toBe(false);
    await lease.release();
    expect(sent).toHaveLength(2);
    // Once confirmed, release is idempotent: nothing more is sent.
    await lease.release();
    expect(sent).toHaveLength(2);
  });

  it('a release refused with NotLockHolderError is final: a second call sends nothing', async () => {
    const { lease, sent } = leaseReleasing([new NotLockHolderError('r', 'o')]);
    await expect(lease.release()).rejects.toSatisfy((e) => isFencekitError(e, 'not-holder'));
    await lease.release();
    expect(sent).toHaveLength(1);
  });

  it('concurrent releases share one attempt and all see its outcome', async () => {
    const { lease, sent } = leaseReleasing([unreachable()]);
    const outcomes = await Promise.allSettled([lease.release(), lease.release()]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(sent).toHaveLength(1);
    await Promise.all([lease.release(), lease.release()]);
    expect(sent).toHaveLength(2);
  });

  it('await using swallows nothing but lost and not-holder: a failed release reaches the caller', async () => {
    const { lease } = leaseReleasing([unreachable()]);
    await expect(lease[Symbol.asyncDispose]()).rejects.toSatisfy((e) =>
      isFencekitError(e, 'backend-unavailable'),
    );
    await lease[Symbol.asyncDispose]();
  });
});
