import { LockAbortedError } from '@fencekit/core';
import { describe, expect, it } from 'vitest';
import { classify } from '../src/client/recorder.js';
import { parseRunOptions } from '../src/index.js';
import { seededRandom } from '../src/nemesis/random.js';
import { drawCancel } from '../src/workloads/cancel.js';

describe('--abort-rate', () => {
  it('defaults to 0 and takes only a share from 0 to 1', () => {
    expect(parseRunOptions({ backend: 'zk', workload: 'mutex' }).abortRate).toBe(0);
    expect(parseRunOptions({ backend: 'zk', workload: 'mutex', abortRate: '0.25' as never }).abortRate).toBe(
      0.25,
    );
    for (const bad of ['1.5', '-0.1', 'often']) {
      expect(() => parseRunOptions({ backend: 'zk', workload: 'mutex', abortRate: bad as never })).toThrow(
        /--abort-rate: a number from 0 to 1/,
      );
    }
  });

  it('draws nothing at rate 0, so every other run replays as before', () => {
    let draws = 0;
    const random = () => {
      draws++;
      return 0;
    };
    const stopping = new AbortController().signal;
    expect(drawCancel({}, 'r', stopping, random)).toBeUndefined();
    expect(drawCancel({ abortRate: 0 }, 'r', stopping, random)).toBeUndefined();
    expect(draws).toBe(0);
  });

  it('cancels the same acquires for the same seed, about the share asked', () => {
    const stopping = new AbortController().signal;
    const plan = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 400 }, () => {
        const cancel = drawCancel({ abortRate: 0.25 }, 'r', stopping, random);
        cancel?.dispose();
        return cancel === undefined ? null : cancel.recorded;
      });
    };
    const first = plan(7);
    expect(plan(7)).toEqual(first);
    const cancelled = first.filter((c) => c !== null);
    expect(cancelled.length).toBeGreaterThan(60);
    expect(cancelled.length).toBeLessThan(140);
    for (const c of cancelled) {
      if ('waitMs' in c) expect(c.waitMs).toBeGreaterThanOrEqual(1);
      if ('waitMs' in c) expect(c.waitMs).toBeLessThanOrEqual(4);
      else expect(c.abortAfterMs).toBeLessThanOrEqual(8);
    }
    expect(cancelled.some((c) => 'waitMs' in c)).toBe(true);
    expect(cancelled.some((c) => 'abortAfterMs' in c)).toBe(true);
  });

  it('aborts with the contract’s abort error, recorded as a failed acquire (ended, not held)', async () => {
    const stopping = new AbortController().signal;
    let cancel: ReturnType<typeof drawCancel>;
    // Draws: chosen (0 < 1), the abort branch (0.9 ≥ 0.5), 0 ms.
    const draws = [0, 0.9, 0];
    cancel = drawCancel({ abortRate: 1 }, 'r', stopping, () => draws.shift()!);
    expect(cancel?.recorded).toEqual({ abortAfterMs: 0 });
    await new Promise<void>((resolve) => cancel!.signal.addEventListener('abort', () => resolve()));
    expect(cancel!.signal.reason).toBeInstanceOf(LockAbortedError);
    expect(classify(cancel!.signal.reason).type).toBe('fail');
    cancel!.dispose();
  });

  it('passes the run’s stop through', () => {
    const stop = new AbortController();
    const draws = [0, 0.9, 1];
    const cancel = drawCancel({ abortRate: 1 }, 'r', stop.signal, () => draws.shift()!);
    stop.abort(new Error('stopping'));
    expect(cancel!.signal.aborted).toBe(true);
    expect((cancel!.signal.reason as Error).message).toBe('stopping');
    cancel!.dispose();
  });
});
