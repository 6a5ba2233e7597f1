import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { livenessWithStalls, recoveryFaults } from '../src/check/checkers.js';

/**
 * Issue #13: after an `isolate` on etcd 3.4 (no pre-vote) the cluster had no leader for up to 4.7 s after
 * the heal (the rejoining member's higher term, then failed elections on a loaded machine), and liveness,
 * excusing one TTL after the heal, convicted 6 of 19 runs; each starved stretch ended when the heal
 * probe first saw a quorum request answered. A healed fault is now held in force until then.
 */
const s = 1e9;
const options = { boundMs: 2_000, settleMs: 1_000 };

/** An isolate from 1 s to its heal at 2 s; one waiter asking from 2 s to `until` for a lock nobody holds. */
function history(until: number): HistoryEvent[] {
  const events: Omit<HistoryEvent, 'index'>[] = [
    { time: 1 * s, process: 'nemesis', type: 'invoke', f: 'start', value: { fault: 'isolate' } },
    { time: 1 * s, process: 'nemesis', type: 'ok', f: 'start', value: { fault: 'isolate', node: 'n2' } },
    { time: 2 * s, process: 'nemesis', type: 'invoke', f: 'stop', value: { fault: 'isolate', node: 'n2' } },
    { time: 2 * s, process: 'nemesis', type: 'ok', f: 'stop', value: { fault: 'isolate', node: 'n2' } },
    { time: 2.1 * s, process: 1, type: 'invoke', f: 'acquire', value: { resource: 'r', waitMs: 10_000 } },
    {
      time: until * s,
      process: 1,
      type: 'fail',
      f: 'acquire',
      value: { code: 'timeout' },
      error: 'timed out',
    },
  ];
  return events.map((e, index) => ({ index, ...e }));
}

describe('liveness after a heal, with the servers’ measured recovery', () => {
  it('convicted a run whose servers served again only 3.5 s after the heal (settle: one TTL)', () => {
    expect(livenessWithStalls(history(6.6), options, 1_000).verdict).toBe('illegal');
  });

  it('holds the fault in force until its heal probe saw the servers serving again', () => {
    const recovered = [{ fault: 'isolate', atNs: 5.5 * s }];
    const result = livenessWithStalls(history(6.6), options, 1_000, recovered);
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ recoveries: 1, longestRecoveryMs: 3_500 });
  });

  it('still convicts a lock stuck after the servers serve again', () => {
    const recovered = [{ fault: 'isolate', atNs: 5.5 * s }];
    expect(livenessWithStalls(history(10), options, 1_000, recovered).verdict).toBe('illegal');
  });

  it('ignores a recovery with no stop of that fault before it', () => {
    expect(recoveryFaults(history(3), [{ fault: 'kill', atNs: 5 * s }]).count).toBe(0);
    expect(recoveryFaults(history(3), [{ fault: 'isolate', atNs: 1.5 * s }]).count).toBe(0);
  });
});
