import { Waiter } from '@fencekit/redis';
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
});
