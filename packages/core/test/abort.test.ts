import { abortedPromise, combineSignals, deadlineSignal, sleep } from '@fencekit/core';
import { describe, expect, it } from 'vitest';

describe('abort helpers', () => {
  it('sleep resolves, or rejects with the abort reason and clears its timer', async () => {
    await sleep(5);
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const before = process.getActiveResourcesInfo().filter((t) => t === 'Timeout').length;
    const pending = sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(process.getActiveResourcesInfo().filter((t) => t === 'Timeout').length).toBe(before);
    await expect(sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('combineSignals aborts with the first reason and detaches on dispose', async () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const combined = combineSignals(a.signal, undefined, b.signal);
    expect(combined.signal.aborted).toBe(false);
    b.abort('b first');
    a.abort('a second');
    expect(combined.signal.reason).toBe('b first');
    const c = new AbortController();
    {
      using disposed = combineSignals(c.signal);
      expect(disposed.signal.aborted).toBe(false);
    }
    c.abort();
    expect(combineSignals(AbortSignal.abort('already')).signal.reason).toBe('already');
  });

  it('deadlineSignal fires after ms, earlier with the parent, and not at all once disposed', async () => {
    const deadline = deadlineSignal(10, undefined, () => new Error('too slow'));
    await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve));
    expect((deadline.signal.reason as Error).message).toBe('too slow');

    const parent = new AbortController();
    const early = deadlineSignal(60_000, parent.signal);
    parent.abort('parent');
    expect(early.signal.reason).toBe('parent');
    early.dispose();

    const disposed = deadlineSignal(10);
    disposed.dispose();
    await sleep(30);
    expect(disposed.signal.aborted).toBe(false);
  });

  it('abortedPromise rejects on abort and never leaves an unhandled rejection', async () => {
    const controller = new AbortController();
    const watch = abortedPromise(controller.signal);
    controller.abort('stop');
    await expect(watch.promise).rejects.toBe('stop');
    const unused = abortedPromise(AbortSignal.abort('ignored'));
    unused.dispose();
    await sleep(5);
  });
});
