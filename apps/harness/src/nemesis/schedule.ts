import type { FaultName } from './faults.js';
import { pick, seededRandom } from './random.js';

/** One fault of a schedule: start at `atMs` after the run starts, heal `durationMs` later. */
export interface ScheduledFault {
  atMs: number;
  fault: FaultName;
  durationMs: number;
}

export interface ScheduleOptions {
  seed: number;
  faults: readonly FaultName[];
  durationMs: number;
  ttlMs: number;
}

/**
 * A Jepsen-style schedule, the same for the same seed: a quiet warm-up, then faults one at a time
 * (each held for 1.5–3 TTLs, so leases really expire under it, then healed), separated by quiet
 * gaps; the last stretch of the run is the recovery phase with every fault healed, so a backend that
 * only recovers slowly shows it.
 */
export function faultSchedule(options: ScheduleOptions): { faults: ScheduledFault[]; recoveryAtMs: number } {
  const random = seededRandom(options.seed);
  const { ttlMs, durationMs } = options;
  const recoveryAtMs = Math.round(durationMs - Math.max(durationMs * 0.2, 2 * ttlMs));
  const faults: ScheduledFault[] = [];
  if (options.faults.length === 0) return { faults, recoveryAtMs };
  let at = Math.round(Math.min(durationMs * 0.1, ttlMs));
  for (let i = 0; i < 1_000; i++) {
    const fault = pick(random, options.faults);
    const durationMsOf = Math.round(ttlMs * (1.5 + 1.5 * random()));
    if (at + durationMsOf > recoveryAtMs) break;
    faults.push({ atMs: at, fault, durationMs: durationMsOf });
    at += durationMsOf + Math.round(ttlMs * (0.5 + random()));
  }
  return { faults, recoveryAtMs };
}
