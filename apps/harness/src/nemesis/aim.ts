/**
 * Whether an aimed fault met its aim: the moment it waits for is one thing, what it is after another. A
 * reset-holder window whose release got through before the outage (or never came within it) reset the
 * links of a client that then did nothing the fault is about; the probes still see the reset, so the
 * fault is applied and observed, yet the run tested nothing of what it names (#13/#20). Judged from each
 * window's evidence, as recorded by the fault itself (aimed.ts, aimed-links.ts, stall-acquire.ts,
 * delete-waiter.ts, drift-majority.ts).
 */

import type { CheckOutcome } from '../check/check.js';

type Evidence = Readonly<Record<string, unknown>>;

interface Aim {
  /** true: met; false: missed; undefined: the evidence does not say (a record from before it was kept). */
  met(evidence: Evidence): boolean | undefined;
  /** What did not happen, for the verdict's reason. */
  missed: string;
}

/** `key` was recorded and is not null: `true` when `ok(value)`. */
const when =
  (key: string, ok: (value: unknown) => boolean) =>
  (evidence: Evidence): boolean | undefined =>
    Object.hasOwn(evidence, key) ? ok(evidence[key]) : undefined;

const otherGranted = when('otherClient', (v) => typeof v === 'number');

/** The aim of each aimed fault that has one to miss (suspend and hang-at-close act on any moment they get). */
const AIMS: Readonly<Record<string, Aim>> = {
  'reset-holder': {
    // 'fail'/'info': the release failed within the outage; 'ok': it got through first; null: none came.
    met: when('release', (v) => v === 'fail' || v === 'info'),
    missed: 'no release failed inside the outage',
  },
  'cut-holder': { met: otherGranted, missed: 'no other client was granted during the cut' },
  'stall-holder': { met: otherGranted, missed: 'no other client was granted during the stall' },
  'stall-acquire': {
    // false: the acquire was answered before the stop; null: its answer was never seen.
    met: when('inFlight', (v) => v === true),
    missed: 'no acquire was seen in flight when its client was stopped',
  },
  flicker: {
    met: when('requestMetOutage', (v) => v === true),
    missed: 'the release or extend it was timed on was answered before the outage',
  },
  'quorum-loss': {
    // The release met the outage, and the outage outlasted the session and every client's give-up of it
    // (the clients moved to new ones; records from before beyondGiveUp say only beyondSession).
    met: (evidence) =>
      Object.hasOwn(evidence, 'requestMetOutage') && Object.hasOwn(evidence, 'beyondSession')
        ? evidence.requestMetOutage === true &&
          evidence.beyondSession === true &&
          evidence.beyondGiveUp !== false
        : undefined,
    missed:
      'the release it was timed on was answered before the outage, or the outage ended before every client could give its session up',
  },
  'delete-waiter-key': {
    met: when('key', (v) => typeof v === 'string'),
    missed: "no waiter's key was deleted",
  },
  'drift-majority': {
    // The holder stalled under the drift: without it the pass tested only a drift the quorum absorbs.
    met: (evidence) => typeof evidence.holder === 'number',
    missed: 'no holder granted under the drift was stalled',
  },
};

/**
 * Each aimed fault whose applied windows all missed their aim: the run cannot clear it. A fault with at
 * least one window that met its aim (or whose evidence does not say) is judged as before.
 */
export function missedAims(
  faults: readonly { fault: string; applied: boolean; evidence?: Record<string, unknown> }[],
): string[] {
  const windows = new Map<string, (boolean | undefined)[]>();
  for (const f of faults) {
    const aim = Object.hasOwn(AIMS, f.fault) ? AIMS[f.fault] : undefined;
    if (!f.applied || !aim) continue;
    const list = windows.get(f.fault) ?? [];
    list.push(f.evidence ? aim.met(f.evidence) : undefined);
    windows.set(f.fault, list);
  }
  const problems: string[] = [];
  for (const [fault, met] of windows) {
    if (met.every((m) => m === false)) {
      const of = met.length > 1 ? ` in any of its ${met.length} windows` : '';
      problems.push(`${fault} applied but its aim was not met: ${AIMS[fault]!.missed}${of}`);
    }
  }
  return problems;
}

/**
 * An aimed fault that missed its aim in every window keeps the run from being cleared, as a fault applied but
 * not observed does (observation.ts's withFaultEffects): its reason joins the `fault-effects` entry (unknown)
 * and an `ok` verdict is lowered to `unknown`; a violation found stays `illegal`.
 */
export function withMissedAims(
  outcome: CheckOutcome,
  faults: Parameters<typeof missedAims>[0],
): CheckOutcome {
  const missed = missedAims(faults);
  if (missed.length === 0) return outcome;
  const prior = outcome.checkers['fault-effects'];
  const priorCount = (prior?.stats as { unconfirmed?: number } | undefined)?.unconfirmed ?? 0;
  return {
    ...outcome,
    verdict: outcome.verdict === 'ok' ? 'unknown' : outcome.verdict,
    checkers: {
      ...outcome.checkers,
      'fault-effects': {
        verdict: 'unknown',
        violationCount: 0,
        violations: [],
        stats: { unconfirmed: priorCount + missed.length },
        error: [...(prior?.error ? [prior.error] : []), ...missed].join('; '),
      },
    },
  };
}
