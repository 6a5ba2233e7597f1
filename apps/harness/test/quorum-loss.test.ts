import { describe, expect, it } from 'vitest';
import { missedAims } from '../src/nemesis/aim.js';
import { isAimedFault, untriggerableFaults } from '../src/nemesis/faults.js';
import { quorumLossDownMs } from '../src/nemesis/quorum-loss.js';
import { faultSchedule } from '../src/nemesis/schedule.js';

const window = (evidence: Record<string, unknown>) => ({
  fault: 'quorum-loss',
  target: { nodes: ['n1', 'n2', 'n3'] },
  applied: true,
  evidence,
});

describe('quorum-loss', () => {
  it('is aimed, waits for a release or resign, and keeps the servers down past the session', () => {
    expect(isAimedFault('quorum-loss')).toBe(true);
    expect(untriggerableFaults('cron', ['quorum-loss'])).toHaveLength(1);
    expect(untriggerableFaults('inventory', ['quorum-loss'])).toEqual([]);
    // Each client checks its suspension a few times a session: down well past one session.
    expect(quorumLossDownMs(8_000)).toBeGreaterThan(8_000 * 1.2);
  });

  it('met its aim only where the release met an outage that outlasted the session', () => {
    const met = window({ requestMetOutage: true, beyondSession: true });
    const answeredFirst = window({ requestMetOutage: false, beyondSession: true });
    const tooShort = window({ requestMetOutage: true, beyondSession: false });
    expect(missedAims([met])).toEqual([]);
    expect(missedAims([answeredFirst, met])).toEqual([]);
    expect(missedAims([answeredFirst, tooShort])).toEqual([
      'quorum-loss applied but its aim was not met: the release it was timed on was answered before the outage, or the outage ended within the session in any of its 2 windows',
    ]);
    // A record that does not say (no evidence kept) is judged as before.
    expect(missedAims([window({ trigger: 'release' })])).toEqual([]);
  });

  it('gets a slot of two sessions and the restart, which a 30 s run at session 8 s has room for', () => {
    const options = { seed: 1, faults: ['quorum-loss'] as const, ttlMs: 1_500, sessionMs: 8_000 };
    const { faults, recoveryAtMs } = faultSchedule({ ...options, durationMs: 30_000, recoveryMs: 5_500 });
    expect(faults).toHaveLength(1);
    expect(faults[0]!.durationMs).toBeGreaterThanOrEqual(2 * 8_000 + 3_000);
    expect(faults[0]!.atMs + faults[0]!.durationMs).toBeLessThanOrEqual(recoveryAtMs);
  });
});
