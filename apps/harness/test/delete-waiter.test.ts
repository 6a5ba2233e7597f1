import { describe, expect, it } from 'vitest';
import { recoveryPhaseMs } from '../src/check/checkers.js';
import { pickWaiter } from '../src/nemesis/delete-waiter.js';
import { untriggerableFaults } from '../src/nemesis/faults.js';
import { faultSchedule } from '../src/nemesis/schedule.js';

/** `delete-waiter-key` without servers: which key it deletes, where it is refused, its slot in a schedule. */

const key = (queue: string, hex: string, revision: number) => ({
  key: `ns/locks/${queue}/${hex}`,
  createRevision: BigInt(revision),
  lease: String(revision),
});

describe('pickWaiter', () => {
  it('takes the first waiter behind the head of a queue with at least two waiters', () => {
    const picked = pickWaiter([key('a', 'c', 9), key('a', 'a', 3), key('a', 'b', 5)]);
    expect(picked?.victim.key).toBe('ns/locks/a/b');
    expect(picked?.queue.map((k) => k.key)).toEqual(['ns/locks/a/a', 'ns/locks/a/b', 'ns/locks/a/c']);
  });

  it('leaves a queue of a head and one waiter alone (nobody would move up behind it)', () => {
    expect(pickWaiter([key('a', 'a', 3), key('a', 'b', 5), key('b', 'c', 4), key('b', 'd', 6)])).toBe(
      undefined,
    );
  });

  it('takes a head and one waiter when asked to (after half the fault’s wait)', () => {
    expect(pickWaiter([key('a', 'a', 3), key('a', 'b', 5)], 1)?.victim.key).toBe('ns/locks/a/b');
    expect(pickWaiter([key('a', 'a', 3)], 1)).toBe(undefined);
  });

  it('takes the second waiter when a third is behind it (the first may be being granted already)', () => {
    const queue = [key('a', 'a', 3), key('a', 'b', 5), key('a', 'c', 7), key('a', 'd', 9)];
    expect(pickWaiter(queue)?.victim.key).toBe('ns/locks/a/c');
  });

  it('orders by create revision, not by key name', () => {
    const picked = pickWaiter([key('q', '1', 30), key('q', 'f', 10), key('q', '0', 20)]);
    expect(picked?.victim.key).toBe('ns/locks/q/0');
  });
});

it('is refused where nobody ever waits (cas, cron)', () => {
  expect(untriggerableFaults('cron', ['delete-waiter-key'])[0]).toMatch(
    /waiting in a lock or election queue/,
  );
  expect(untriggerableFaults('inventory', ['delete-waiter-key'])).toEqual([]);
});

it('gets a slot of its wait and a second, so every seed of a 10 s etcd run with a 1 s TTL has one', () => {
  for (let seed = 1; seed <= 20; seed++) {
    const { faults } = faultSchedule({
      seed,
      faults: ['delete-waiter-key'],
      durationMs: 10_000,
      ttlMs: 1_000,
      sessionMs: 2_000,
      recoveryMs: recoveryPhaseMs('etcd', 1_000, 'inventory'),
    });
    expect(faults.length).toBeGreaterThanOrEqual(1);
    for (const f of faults) expect(f.durationMs).toBe(f.waitMs! + 1_000);
  }
});
