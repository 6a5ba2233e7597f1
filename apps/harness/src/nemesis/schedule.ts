import { CLOSING_FAULT, type FaultName, isAimedFault } from './faults.js';
import { quorumLossDownMs } from './quorum-loss.js';
import { pick, seededRandom } from './random.js';

/** One fault of a schedule: start at `atMs` after the run starts, heal `durationMs` later. */
export interface ScheduledFault {
  atMs: number;
  fault: FaultName;
  durationMs: number;
  /** Aimed faults: how long to wait for their moment (a holder, a release) before giving up the slot. */
  waitMs?: number;
}

export interface ScheduleOptions {
  seed: number;
  faults: readonly FaultName[];
  durationMs: number;
  ttlMs: number;
  /** See `NemesisContext.sessionMs`; the TTL when absent. */
  sessionMs?: number;
  /**
   * The least recovery phase after the final heal (`recoveryPhaseMs`: settle + liveness bound + margin),
   * so that a lock stuck at the end is convictable; reserved up to half the run (the run extends past
   * its time for the rest); two TTLs when absent.
   */
  recoveryMs?: number;
}

/**
 * A Jepsen-style schedule, the same for the same seed: a quiet warm-up, then faults one at a time
 * (each held for 1.5–3 TTLs, so leases really expire under it, then healed), separated by quiet
 * gaps; the last stretch of the run is the recovery phase with every fault healed, so a backend that
 * only recovers slowly shows it, long enough (`recoveryMs`) for the liveness check to convict a lock
 * that stayed stuck.
 */
export function faultSchedule(options: ScheduleOptions): { faults: ScheduledFault[]; recoveryAtMs: number } {
  const random = seededRandom(options.seed);
  const { ttlMs, durationMs } = options;
  // At most half the run is reserved, so a short run still has faults: the run itself then goes on past
  // its time until the whole recovery phase has passed after the final heal (run/fault-phase.ts).
  const reserved = Math.min(options.recoveryMs ?? 0, durationMs / 2);
  const recoveryAtMs = Math.round(durationMs - Math.max(durationMs * 0.2, 2 * ttlMs, reserved));
  const faults: ScheduledFault[] = [];
  // hang-at-close happens at the run's end, while the clients close, never in the middle.
  const scheduled = options.faults.filter((f) => f !== CLOSING_FAULT);
  if (scheduled.length === 0) return { faults, recoveryAtMs };
  const sessionMs = options.sessionMs ?? ttlMs;
  let at = Math.round(Math.min(durationMs * 0.1, ttlMs));
  // Every listed fault has a slot before any repeats (#20: a run labelled with a fault that never got one says
  // nothing about it); with one fault this draws exactly as a plain pick did, so its schedules are unchanged.
  const unscheduled = [...scheduled];
  for (let i = 0; i < 1_000; i++) {
    const fault = pick(random, unscheduled.length > 0 ? unscheduled : scheduled);
    const heldMs = Math.round(ttlMs * (1.5 + 1.5 * random()));
    // An aimed fault's slot is a wait for its moment (a holder, a release), then the fault, sized by the
    // session: a stall of a session and more, half a session of outage and a restart. One that runs
    // longer delays the next; the recovery phase cuts it short (and its record says so). Deleting a
    // waiter's key is instantaneous (a delete and its probe): its slot is the wait and a second.
    const aimed = isAimedFault(fault);
    // quorum-loss keeps a majority down until every client gave its session up, then restarts them (JVMs).
    const actMs =
      fault === 'delete-waiter-key'
        ? 0
        : fault === 'quorum-loss'
          ? quorumLossDownMs(sessionMs) + 3_000
          : sessionMs;
    const durationMsOf = !aimed ? heldMs : heldMs + 1_000 + actMs;
    if (at + durationMsOf > recoveryAtMs) break;
    faults.push({ atMs: at, fault, durationMs: durationMsOf, ...(aimed ? { waitMs: heldMs } : {}) });
    if (unscheduled.includes(fault)) unscheduled.splice(unscheduled.indexOf(fault), 1);
    at += durationMsOf + Math.round(ttlMs * (0.5 + random()));
  }
  return { faults, recoveryAtMs };
}

/**
 * The listed faults (but the closing one) that the schedule of these options has no slot for: a run too short for
 * its faults. With the shortest duration (whole seconds) at which every one of them has a slot, when there is one.
 */
export function unscheduledFaults(options: ScheduleOptions): { missing: FaultName[]; enoughMs?: number } {
  const missingAt = (durationMs: number) => {
    const { faults } = faultSchedule({ ...options, durationMs });
    return options.faults.filter((f) => f !== CLOSING_FAULT && !faults.some((s) => s.fault === f));
  };
  const missing = missingAt(options.durationMs);
  if (missing.length === 0) return { missing };
  for (let s = Math.ceil(options.durationMs / 1_000) + 1; s <= 3_600; s++) {
    if (missingAt(s * 1_000).length === 0) return { missing, enoughMs: s * 1_000 };
  }
  return { missing };
}
