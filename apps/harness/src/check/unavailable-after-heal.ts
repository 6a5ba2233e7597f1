import { type CheckResult, faultWindows, type HistoryEvent } from '@fencekit/checker';

type History = readonly HistoryEvent[];

/**
 * Nobody granted once the servers serve again: every acquire invoked after the final heal (and the backend's
 * settle) ended without a grant. `processes` asked; `failed` of their acquires ended so, `granted` is 0.
 */
export interface UnavailableAfterHealViolation {
  kind: 'unavailable-after-heal';
  message: string;
  /** From the final heal plus settle (history clock, ns) to the last acquire judged. */
  from: number;
  to: number;
  processes: number;
  failed: number;
  granted: 0;
}

export interface UnavailableAfterHealStats {
  /** Acquires invoked after the final heal plus settle that ended (ok, fail or info). */
  acquiresAfterHeal: number;
  grantsAfterHeal: number;
  /** Processes that asked after the heal and were never granted: a client stuck alone shows here. */
  processesNeverGrantedAfterHeal: number;
}

/**
 * Whether any acquire invoked after the final heal, plus `settleMs`, was granted. `history` carries the run's
 * faults (with `recovering …` faults held until the heal probe saw the servers serve, see `recoveryFaults`).
 *
 * Why: liveness's starvation check counts time spent waiting for a lock nobody holds, so acquires that fail at
 * once (a client whose connection ended for good, #17) wait for nothing and a run in which nobody is granted for
 * the whole recovery phase passed. The recovery phase is at least settle + two TTLs + a margin long
 * (`recoveryPhaseMs`), in which a working client is granted many times over. Not judged: runs without a fault,
 * a fault never healed, or no acquire ending after the heal.
 */
export function checkUnavailableAfterHeal(
  history: History,
  settleMs: number,
): CheckResult<UnavailableAfterHealViolation, UnavailableAfterHealStats> {
  const stats: UnavailableAfterHealStats = {
    acquiresAfterHeal: 0,
    grantsAfterHeal: 0,
    processesNeverGrantedAfterHeal: 0,
  };
  const faults = faultWindows(history);
  if (faults.length === 0 || faults.some((f) => !Number.isFinite(f.end))) {
    return { verdict: 'ok', violations: [], stats };
  }
  const from = Math.max(...faults.map((f) => f.end)) + settleMs * 1e6;
  const invokedAt = new Map<unknown, number>();
  const asked = new Map<unknown, boolean>();
  let failed = 0;
  let to = from;
  let firstError: string | undefined;
  for (const e of history) {
    if (e.f !== 'acquire' || e.process === 'nemesis') continue;
    if (e.type === 'invoke') {
      invokedAt.set(e.process, e.time);
      continue;
    }
    const invoked = invokedAt.get(e.process);
    invokedAt.delete(e.process);
    if (invoked === undefined || invoked < from) continue;
    stats.acquiresAfterHeal++;
    to = Math.max(to, e.time);
    if (e.type === 'ok') {
      stats.grantsAfterHeal++;
      asked.set(e.process, true);
    } else {
      failed++;
      firstError ??= e.error === undefined ? undefined : String(e.error);
      if (!asked.has(e.process)) asked.set(e.process, false);
    }
  }
  stats.processesNeverGrantedAfterHeal = [...asked.values()].filter((granted) => !granted).length;
  if (stats.acquiresAfterHeal === 0 || stats.grantsAfterHeal > 0)
    return { verdict: 'ok', violations: [], stats };
  const seconds = ((to - from) / 1e9).toFixed(1);
  return {
    verdict: 'illegal',
    violations: [
      {
        kind: 'unavailable-after-heal',
        message:
          `no acquire granted in ${seconds} s after the final heal (and ${settleMs} ms to settle): ${failed} ` +
          `acquires of ${asked.size} processes failed${firstError === undefined ? '' : `, the first: ${firstError}`}`,
        from,
        to,
        processes: asked.size,
        failed,
        granted: 0,
      },
    ],
    stats,
  };
}
