import { Waiter } from '@fencekit/redis/internal';
import { describe, expect, it } from 'vitest';
import { QuorumWake } from '../src/quorum-wake.js';

function counting(): { waiter: Waiter; wakes: () => number } {
  const waiter = new Waiter();
  let wakes = 0;
  const wake = waiter.wake;
  Object.defineProperty(waiter, 'wake', {
    value: (fence?: string) => {
      wakes += 1;
      wake(fence);
    },
  });
  return { waiter, wakes: () => wakes };
}

describe('QuorumWake', () => {
  it('resumes the waiter once a quorum of distinct nodes announced the release', () => {
    const { waiter, wakes } = counting();
    const wake = new QuorumWake(waiter, 3, 1_000);
    wake.from(0)();
    wake.from(0)();
    wake.from(1)();
    expect(wakes()).toBe(0);
    wake.from(4)();
    expect(wakes()).toBe(1);
    wake.dispose();
  });

  it('resumes after the grace period when too few nodes announce', async () => {
    const { waiter, wakes } = counting();
    const wake = new QuorumWake(waiter, 3, 5);
    wake.from(2)();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(wakes()).toBe(1);
    wake.dispose();
  });

  it('counts direct grants of the current generation only, and forgets them when told to', () => {
    const { waiter } = counting();
    const wake = new QuorumWake(waiter, 3, 1_000);
    wake.expect('2');
    wake.from(0)('1'); // an older attempt's entry: it may have been given back since
    wake.from(1)('2');
    wake.from(2)('2');
    expect(wake.handedQuorum).toBe(false);
    wake.from(2)('2'); // the same node twice is one grant
    expect(wake.handedQuorum).toBe(false);
    wake.from(3)('2');
    expect(wake.handedQuorum).toBe(true);
    // The attempt gave back: none of those grants can be trusted any more.
    wake.expect('');
    expect(wake.handedQuorum).toBe(false);
    for (const node of [0, 1, 2]) wake.from(node)('2');
    expect(wake.handedQuorum).toBe(false);
    // Nor does an empty tag ever count.
    for (const node of [0, 1, 2]) wake.from(node)('');
    expect(wake.handedQuorum).toBe(false);
    wake.dispose();
  });
});
