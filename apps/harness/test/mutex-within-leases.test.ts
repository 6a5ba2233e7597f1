import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { checkMutexWithinLeases } from '../src/check/checkers.js';
import { checkHistory } from '../src/index.js';

/**
 * Issue #13: at a 50 ms TTL on etcd with no fault, the mutex check convicted the unmutated adapter with
 * fencing on: a holder's section outlived the lease it had checked (its validity ended 39 ms before the
 * resource even stamped its entry), and the next waiter, granted 60 ms after that lease had ended by its
 * holder's own reading, entered with a higher fence before the first left. The lock kept its promise (the
 * lease check was clean); the fence protects the overrun. These histories are that pattern, in ms.
 */
const ms = 1e6;

/** A grant at `at` believed valid until `validUntil` (ms), with the enter and leave of its section. */
function section(
  process: number,
  fence: string,
  at: number,
  validUntil: number,
  enter: number,
  leave: number,
): Omit<HistoryEvent, 'index'>[] {
  const grant = `c${process}.${fence}`;
  return [
    {
      time: (at - 1) * ms,
      process,
      type: 'invoke',
      f: 'acquire',
      value: { resource: 'section', waitMs: 2000 },
    },
    {
      time: at * ms,
      process,
      type: 'ok',
      f: 'acquire',
      value: { grant, resource: 'section', fence, validUntil: String(validUntil * ms), at: String(at * ms) },
    },
    { time: (at + 0.1) * ms, process, type: 'invoke', f: 'enter', value: { grant, fence } },
    {
      time: enter * ms,
      process: 'resource',
      type: 'ok',
      f: 'enter',
      value: { client: process, fence, accepted: true },
    },
    { time: leave * ms, process: 'resource', type: 'ok', f: 'leave', value: { client: process, fence } },
    { time: (leave + 1) * ms, process, type: 'invoke', f: 'release', value: { grant, fence, boundMs: 5000 } },
    { time: (leave + 2) * ms, process, type: 'ok', f: 'release', value: null },
  ];
}

function history(...parts: Omit<HistoryEvent, 'index'>[][]): HistoryEvent[] {
  return parts
    .flat()
    .sort((a, b) => a.time - b.time)
    .map((e, index) => ({ index, ...e }));
}

// The first holder's lease ends at 16 ms; its section at the resource runs 55-115 ms. The second is
// granted at 76 ms (after that end) and enters at 77 ms with a higher fence.
const overrun = history(section(4, '369', 0, 16, 55, 115), section(3, '371', 76, 126, 77, 160));
// The same, but the second enters at 10 ms, while the first lease is still believed valid.
const early = history(section(4, '369', 0, 16, 5, 115), section(3, '371', 9, 60, 10, 160));

describe('the mutex check where the resource checks fences', () => {
  it('does not convict a section that outlived its own lease, a higher fence entering after it ended', () => {
    const result = checkMutexWithinLeases(overrun);
    expect(result.verdict).toBe('ok');
    expect(result.stats.overlapsPastLease).toBe(1);
    expect(result.stats.overlaps).toBe(0);
  });

  it('convicts an entry while the earlier holder still believed its lease valid', () => {
    const result = checkMutexWithinLeases(early);
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]?.message).toMatch(/client 4 \(fence 369\) and client 3 \(fence 371\)/);
  });

  it("reads the earlier holder's lease from its grant of that section when a restarted server reissued the fence", () => {
    // A Redis restarted without persistence counts fences from 1 again: client 4 is granted fence 369 a
    // second time, long after the overrun above. The section at 55-115 ms belongs to the first grant
    // (ended at 16 ms), not to the later one (ended at its release at 322 ms).
    const again = section(4, '369', 300, 500, 305, 320).map((e) => {
      if (!e.value || typeof e.value !== 'object' || !('grant' in e.value)) return e;
      return { ...e, value: { ...e.value, grant: 'c4.369.again' } };
    });
    const result = checkMutexWithinLeases(
      history(section(4, '369', 0, 16, 55, 115), section(3, '371', 76, 126, 77, 160), again),
    );
    expect(result.verdict).toBe('ok');
    expect(result.stats.overlapsPastLease).toBe(1);
  });

  it('leaves the reissued fence to the fences check: the run is convicted for it, the overrun still excused', async () => {
    const again = section(4, '369', 300, 500, 305, 320).map((e) => {
      if (!e.value || typeof e.value !== 'object' || !('grant' in e.value)) return e;
      return { ...e, value: { ...e.value, grant: 'c4.369.again' } };
    });
    const plan = { workload: 'mutex' as const, fenced: true, fencing: true, initialStock: 0, ttlMs: 50 };
    const outcome = await checkHistory(
      { ...plan, backend: 'redis' },
      history(section(4, '369', 0, 16, 55, 115), section(3, '371', 76, 126, 77, 160), again),
      [],
    );
    expect(outcome.checkers.mutex?.verdict).toBe('ok');
    expect(outcome.checkers.fences?.verdict).toBe('illegal');
    // This resource accepted the second 369 after 371 (stale-accepted); the lock's reuse is its own violation.
    expect(outcome.checkers.fences?.violations).toMatchObject([
      { kind: 'stale-accepted', fence: '369', highest: '371' },
      { kind: 'reissued', fence: '369', grants: ['c4.369', 'c4.369.again'] },
    ]);
  });

  it('applies with fencing on only: with fencing off the overrun is unprotected and convicts', async () => {
    const plan = { workload: 'mutex' as const, fenced: true, initialStock: 0, ttlMs: 50, backend: 'etcd' };
    const on = await checkHistory({ ...plan, fencing: true }, overrun, []);
    const off = await checkHistory({ ...plan, fencing: false }, overrun, []);
    expect(on.checkers.mutex?.verdict).toBe('ok');
    expect(on.checkers.lease?.verdict).toBe('ok');
    expect(off.checkers.mutex?.verdict).toBe('illegal');
  });
});
