import { describe, expect, it } from 'vitest';
import { missedAims } from '../src/nemesis/aim.js';
import { isAimedFault, untriggerableFaults } from '../src/nemesis/faults.js';
import { quorumLossDownMs, quorumLossGiveUpMs } from '../src/nemesis/quorum-loss.js';
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

  it('keeps the servers down until a client on the surviving server has given its session up too', () => {
    // That client suspends only when its requests go unanswered past the vouched span (⅔ session), then
    // gives up one session later, checked every probe tick (⅙ session): 14.7 s after the kill at 8 s.
    // At 10.5 s (the old 1.25 sessions + 0.5 s) the servers were back first, the clients resumed their
    // old sessions and deleted their given-up nodes through them: zk-withdraw-gives-up went unseen.
    for (const sessionMs of [4_000, 8_000, 20_000]) {
      expect(quorumLossGiveUpMs(sessionMs)).toBeGreaterThanOrEqual(sessionMs * (2 / 3 + 1 + 1 / 6));
      expect(quorumLossDownMs(sessionMs)).toBeGreaterThan(quorumLossGiveUpMs(sessionMs) + 1_000);
    }
  });

  it('met its aim only where the release met an outage that outlasted the session', () => {
    const met = window({ requestMetOutage: true, beyondSession: true });
    const answeredFirst = window({ requestMetOutage: false, beyondSession: true });
    const tooShort = window({ requestMetOutage: true, beyondSession: false });
    const beforeGiveUp = window({ requestMetOutage: true, beyondSession: true, beyondGiveUp: false });
    expect(missedAims([beforeGiveUp])).toHaveLength(1);
    expect(missedAims([window({ requestMetOutage: true, beyondSession: true, beyondGiveUp: true })])).toEqual(
      [],
    );
    expect(missedAims([met])).toEqual([]);
    expect(missedAims([answeredFirst, met])).toEqual([]);
    expect(missedAims([answeredFirst, tooShort])).toEqual([
      'quorum-loss applied but its aim was not met: the release it was timed on was answered before the outage, or the outage ended before every client could give its session up in any of its 2 windows',
    ]);
    // A record that does not say (no evidence kept) is judged as before.
    expect(missedAims([window({ trigger: 'release' })])).toEqual([]);
  });

  it('gets a slot of the outage and the restarts, which a 34 s run at session 8 s has room for', () => {
    const options = { seed: 1, faults: ['quorum-loss'] as const, ttlMs: 1_500, sessionMs: 8_000 };
    const { faults, recoveryAtMs } = faultSchedule({ ...options, durationMs: 34_000, recoveryMs: 5_500 });
    expect(faults).toHaveLength(1);
    expect(faults[0]!.durationMs).toBeGreaterThanOrEqual(quorumLossDownMs(8_000) + 3_000);
    expect(faults[0]!.atMs + faults[0]!.durationMs).toBeLessThanOrEqual(recoveryAtMs);
  });
});
