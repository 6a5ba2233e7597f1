import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from '../src/check/check.js';
import { unconfirmedFaults, withFaultEffects } from '../src/nemesis/observation.js';

const outcome = (verdict: CheckOutcome['verdict']): CheckOutcome => ({ verdict, problems: [], checkers: {} });
const seen = (atMs: number) => ({ seen: true, detail: 'ok', atMs });
const unseen = (detail: string) => ({ seen: false, detail, atMs: 1_000 });

describe('a fault applied but not observed keeps a run from being cleared', () => {
  it('lowers ok to unknown, naming the fault; a violation stays illegal', () => {
    const faults = [
      {
        fault: 'isolate',
        target: { node: 'n2' },
        applied: true,
        observed: { started: unseen('all agree on n1') },
      },
    ];
    const capped = withFaultEffects(outcome('ok'), faults);
    expect(capped.verdict).toBe('unknown');
    expect(capped.checkers['fault-effects']?.error).toBe(
      'isolate on n2 was applied but its effect was not observed (all agree on n1)',
    );
    expect(withFaultEffects(outcome('illegal'), faults).verdict).toBe('illegal');
  });

  it('an effect not seen to end after the heal counts too', () => {
    const faults = [
      {
        fault: 'clock-jump',
        target: { node: 'n1' },
        applied: true,
        observed: { started: seen(1), healed: unseen('runs at 3.00x') },
      },
    ];
    expect(unconfirmedFaults(faults)).toEqual([
      'clock-jump on n1: its effect was not seen to end after the heal (runs at 3.00x)',
    ]);
  });

  it('leaves runs alone whose faults were seen, not applied, or recorded before faults were probed', () => {
    const faults = [
      {
        fault: 'kill',
        target: { node: 'n1' },
        applied: true,
        observed: { started: seen(1), healed: seen(2) },
      },
      { fault: 'partition', target: {}, applied: false },
      { fault: 'pause-server', target: { node: 'n1' }, applied: true },
    ];
    expect(withFaultEffects(outcome('ok'), faults)).toEqual(outcome('ok'));
  });
});
