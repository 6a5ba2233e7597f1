import { LockAbortedError, LockTimeoutError, monotonicNow } from '@fencekit/core';
import { Waiter, waitForGrant } from '@fencekit/redis/internal';
import { describe, expect, it } from 'vitest';

function plan(overrides: Partial<Parameters<typeof waitForGrant<string>>[0]> = {}) {
  const closing = new AbortController();
  return {
    resource: 'r',
    startedAt: monotonicNow(),
    waitMs: 1_000,
    signal: undefined,
    closing: closing.signal,
    clientName: 'test',
    heartbeatMs: 1_000,
    attemptBoundMs: 0,
    waiter: new Waiter(),
    attempt: async () => ({ retryMs: 10_000 }),
    cancel: async () => undefined,
    stopGraceMs: 250,
    track: (_cleanup: Promise<void>) => undefined,
    ...overrides,
  };
}

describe('waitForGrant', () => {
  it('parks between attempts and retries at once when woken', async () => {
    const waiter = new Waiter();
    let attempts = 0;
    const granted = waitForGrant<string>(
      plan({
        waiter,
        attempt: async () => (++attempts === 2 ? { grant: 'lease' } : { retryMs: 10_000 }),
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(attempts).toBe(1);
    waiter.wake();
    await expect(granted).resolves.toBe('lease');
  });

  it('with the first refusal given (initial), parks first: a grant handed over before any attempt is taken as is', async () => {
    const waiter = new Waiter();
    let attempts = 0;
    // The message arrived before waitForGrant began (it may beat the first attempt's reply).
    waiter.wake('9');
    const granted = waitForGrant<string>(
      plan({
        waiter,
        initial: { retryMs: 10_000 },
        attempt: async () => {
          attempts += 1;
          return { retryMs: 10_000 };
        },
        handedOver: () => {
          const fence = waiter.takeHandedFence();
          return fence === undefined ? undefined : `fence ${fence}`;
        },
      }),
    );
    await expect(granted).resolves.toBe('fence 9');
    expect(attempts).toBe(0);
  });

  it('with initial, an abort that came before it began still cancels the queue entry', async () => {
    const abort = new AbortController();
    abort.abort(new Error('caller gave up'));
    let cancels = 0;
    let attempts = 0;
    const stopped = waitForGrant<string>(
      plan({
        signal: abort.signal,
        initial: { retryMs: 10_000 },
        attempt: async () => {
          attempts += 1;
          return { retryMs: 10_000 };
        },
        cancel: async () => {
          cancels += 1;
        },
      }),
    );
    await expect(stopped).rejects.toBeInstanceOf(LockAbortedError);
    expect(cancels).toBe(1);
    expect(attempts).toBe(0);
  });

  it('takes a grant handed over by a release without another attempt', async () => {
    const waiter = new Waiter();
    let attempts = 0;
    const granted = waitForGrant<string>(
      plan({
        waiter,
        attempt: async () => {
          attempts += 1;
          return { retryMs: 10_000 };
        },
        handedOver: () => {
          const fence = waiter.takeHandedFence();
          return fence === undefined ? undefined : `fence ${fence}`;
        },
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    waiter.wake('7');
    await expect(granted).resolves.toBe('fence 7');
    expect(attempts).toBe(1);
  });

  it('times out with LockTimeoutError, or the last failure, and cancels first', async () => {
    let cancelled = 0;
    const cancel = async () => {
      cancelled += 1;
    };
    await expect(waitForGrant(plan({ waitMs: 30, cancel }))).rejects.toBeInstanceOf(LockTimeoutError);
    const failure = new Error('quorum');
    await expect(
      waitForGrant(plan({ waitMs: 30, cancel, attempt: async () => ({ retryMs: 5, error: failure }) })),
    ).rejects.toBe(failure);
    expect(cancelled).toBe(2);
  });

  it("stops on the caller's signal with LockAbortedError", async () => {
    const controller = new AbortController();
    const waiting = waitForGrant(plan({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 10);
    await expect(waiting).rejects.toBeInstanceOf(LockAbortedError);
  });

  it('settles within the stop grace when the clean-up hangs, and hands the clean-up to track', async () => {
    // A hung server: the cancel's request never gets an answer until released here.
    let unblock: () => void = () => undefined;
    const cancel = () =>
      new Promise<void>((resolve) => {
        unblock = resolve;
      });
    let tracked: Promise<void> | undefined;
    const startedAt = monotonicNow();
    const waiting = waitForGrant(
      plan({ waitMs: 30, stopGraceMs: 40, cancel, track: (cleanup) => (tracked = cleanup) }),
    );
    await expect(waiting).rejects.toBeInstanceOf(LockTimeoutError);
    // 30 ms wait + 40 ms grace, with a margin for a loaded machine; before: pending until unblock().
    expect(monotonicNow() - startedAt).toBeLessThan(30 + 40 + 500);
    expect(tracked).toBeDefined();
    let cleanedUp = false;
    void tracked?.then(() => (cleanedUp = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cleanedUp).toBe(false);
    unblock();
    await tracked;
    expect(cleanedUp).toBe(true);
  });

  it('a first attempt that fails does not wait past the stop grace for a hung clean-up', async () => {
    const failure = new Error('Command timed out');
    let unblock: () => void = () => undefined;
    const cancel = () =>
      new Promise<void>((resolve) => {
        unblock = resolve;
      });
    let tracked: Promise<void> | undefined;
    const startedAt = monotonicNow();
    const waiting = waitForGrant(
      plan({
        attempt: async () => {
          throw failure;
        },
        stopGraceMs: 40,
        cancel,
        track: (cleanup) => (tracked = cleanup),
      }),
    );
    await expect(waiting).rejects.toBe(failure);
    // Before: pending until the clean-up answered (2 s on a stopped Redis server).
    expect(monotonicNow() - startedAt).toBeLessThan(40 + 500);
    unblock();
    await tracked;
  });

  it('a first attempt that hangs is ended by the signal or waitMs, and waited for before the cancel', async () => {
    // A hung server: the attempt gets no answer until released here.
    let answer: (outcome: { retryMs: number }) => void = () => undefined;
    const hung = () =>
      new Promise<{ retryMs: number }>((resolve) => {
        answer = resolve;
      });
    const order: string[] = [];
    const cancel = async () => {
      order.push('cancel');
    };
    let tracked: Promise<void> | undefined;
    const track = (cleanup: Promise<void>) => {
      tracked = cleanup;
    };
    const controller = new AbortController();
    const startedAt = monotonicNow();
    const aborted = waitForGrant(
      plan({
        waitMs: 60_000,
        signal: controller.signal,
        attempt: hung,
        cancel,
        attemptBoundMs: 5_000,
        track,
      }),
    );
    setTimeout(() => controller.abort(), 20);
    // Before: pending until the attempt answered (its request's own 5 s bound on a stopped server).
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    expect(monotonicNow() - startedAt).toBeLessThan(20 + 250 + 500);
    expect(order).toEqual([]);
    answer({ retryMs: 10 });
    await tracked;
    expect(order).toEqual(['cancel']);

    const timedOut = waitForGrant(plan({ waitMs: 30, attempt: hung, cancel }));
    await expect(timedOut).rejects.toBeInstanceOf(LockTimeoutError);
    expect(order).toEqual(['cancel', 'cancel']);
  });
});
