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

/**
 * One process never granted after the final heal while others were: each of its acquires (at least
 * `CLIENT_FAILURES_MIN`) refused as `backend-unavailable`, its client cut off from servers that serve the others.
 */
export interface ClientUnavailableAfterHealViolation {
  kind: 'client-unavailable-after-heal';
  message: string;
  process: unknown;
  from: number;
  to: number;
  failed: number;
}

/** A process's refusals after the heal that convict it: one or two could be a lone tail at the run's end. */
export const CLIENT_FAILURES_MIN = 3;

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
 * a fault never healed, or no acquire ending after the heal. When some were granted, a process refused
 * (`backend-unavailable`) every time is convicted on its own ('client-unavailable-after-heal'): one client whose
 * connection ended for good while the others served (a run at 23:21 UTC, before d9594e4).
 */
export function checkUnavailableAfterHeal(
  history: History,
  settleMs: number,
): CheckResult<
  UnavailableAfterHealViolation | ClientUnavailableAfterHealViolation,
  UnavailableAfterHealStats
> {
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
  /** Per process after the heal: acquires refused as backend-unavailable, other failures, the last end. */
  const refused = new Map<unknown, { unavailable: number; other: number; to: number; error?: string }>();
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
      const mine = refused.get(e.process) ?? { unavailable: 0, other: 0, to: e.time };
      const code = (e.value as { code?: unknown } | null | undefined)?.code;
      if (e.type === 'fail' && code === 'backend-unavailable') mine.unavailable++;
      else mine.other++;
      mine.to = e.time;
      if (mine.error === undefined && e.error !== undefined) mine.error = String(e.error);
      refused.set(e.process, mine);
    }
  }
  stats.processesNeverGrantedAfterHeal = [...asked.values()].filter((granted) => !granted).length;
  if (stats.acquiresAfterHeal === 0) return { verdict: 'ok', violations: [], stats };
  if (stats.grantsAfterHeal > 0) {
    // Others were granted, so the servers serve: a client refused each time is stuck on its own side.
    const violations: ClientUnavailableAfterHealViolation[] = [];
    for (const [process, granted] of asked) {
      const mine = refused.get(process);
      if (granted || mine === undefined || mine.other > 0 || mine.unavailable < CLIENT_FAILURES_MIN) continue;
      violations.push({
        kind: 'client-unavailable-after-heal',
        message:
          `process ${String(process)} was refused all ${mine.unavailable} of its acquires after the final heal ` +
          `(and ${settleMs} ms to settle) while other processes were granted ${stats.grantsAfterHeal} times` +
          `${mine.error === undefined ? '' : `: ${mine.error}`}`,
        process,
        from,
        to: mine.to,
        failed: mine.unavailable,
      });
    }
    return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations, stats };
  }
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
