import {
  type Checker,
  type CheckResult,
  checkBounds,
  checkCron,
  checkElection,
  checkFences,
  checkInventory,
  checkLeases,
  checkLiveness,
  checkMutex,
  faultWindows,
  type HistoryEvent,
  leaseWindows,
  type MutexResult,
  type MutexStats,
} from '@fencekit/checker';
import type { WorkloadName } from '../workloads/types.js';
import { type History, judge } from './judge.js';
import { sharedLockCheckers } from './shared-checkers.js';
import { checkUnavailableAfterHeal } from './unavailable-after-heal.js';

export interface CheckPlan {
  workload: WorkloadName;
  /** The backend issues fences, so fence monotonicity can be judged. */
  fenced: boolean;
  /**
   * The resource refused stale fences in this run (fencing on): a section that outlives its lease is then
   * protected by the fence, and the mutex check judges sections only within their holders' leases.
   */
  fencing?: boolean;
  /**
   * When each healed fault's independent probe first saw the servers serving again (history clock, ns):
   * liveness holds the fault in force until then (`recoveryFaults`).
   */
  recoveredAt?: readonly { fault: string; atNs: number }[];
  initialStock: number;
  /** The run's lock TTL: sets the liveness bound. */
  ttlMs?: number;
  /** The backend's name: sets how long a healed fault is still excused (`livenessSettleMs`). */
  backend?: string;
  /** Client processes: lanes for the bounds check's fault exemptions. */
  clients?: number;
}

/**
 * How long waiters may wait in all, while the lock is free by every client's belief and no fault is in
 * force, before it counts as starvation: two TTLs, at least 2 s. Legitimate delays are shorter: a
 * holder's believed window ends before the server lets go by at most one TTL (ZooKeeper keeps a node for
 * the session timeout, which the harness sets to the TTL; Redis and Redlock keep a key until its own
 * TTL, counted from a later instant than the client's), plus wake-up and a loaded machine's scheduling.
 */
export function livenessBoundMs(ttlMs: number | undefined): number {
  return Math.max(2_000, 2 * (ttlMs ?? 0));
}

/**
 * How long a healed fault is still excused, by backend: what the servers need to be themselves again.
 * etcd and ZooKeeper may need a leader election (a restarted or rejoining member can force one, and no
 * write passes meanwhile): about one TTL, the election timeouts the harness's clusters run with being
 * shorter. A Redis, Redlock or memory server answers as soon as it is back (the client's reconnect
 * delay is well inside the bound): nothing. Unknown backends (a history checked without its run) get
 * the election's figure. A lease a failed release left behind is not excused here: its client is alive
 * and keeps it alive, so giving it back is the client's job, and a lock left stuck so is what liveness
 * is for.
 */
export function livenessSettleMs(backend: string | undefined, ttlMs: number | undefined): number {
  if (backend === 'redis' || backend === 'redlock' || backend === 'memory') return 0;
  return ttlMs ?? 0;
}

/** Past settle and bound, what a recovery phase leaves for the clients' waits to add up on a loaded machine. */
export const LIVENESS_MARGIN_MS = 1_000;

/**
 * The least recovery phase (after the final heal) a run needs for liveness to be judged at all: the
 * settle, then a whole bound of waiting, then a margin. Shorter, a lock stuck for good at the end of a
 * run is never convicted (every stretch after a fault is excused or too short); the schedule reserves
 * it and the run keeps it even when the final heal is slow.
 */
export function recoveryPhaseMs(backend: string | undefined, ttlMs: number, workload?: WorkloadName): number {
  // Workloads liveness does not judge (their clients never wait for a lock) keep the old two TTLs.
  if (workload !== undefined && !LIVENESS_JUDGED.has(workload)) return 2 * ttlMs;
  return Math.max(2 * ttlMs, livenessSettleMs(backend, ttlMs) + livenessBoundMs(ttlMs) + LIVENESS_MARGIN_MS);
}

/** The workloads `checkersFor` judges with the liveness check. */
const LIVENESS_JUDGED: ReadonlySet<WorkloadName> = new Set(['inventory', 'mutex']);

/** What the bounds check allows past any documented bound: the scheduler of two shared, loaded cores. */
export const BOUNDS_SLACK_MS = 1_000;

/**
 * Which of the checker package's lock checkers judge which workload. Most see only the resource's
 * view (what was accepted, when); fence monotonicity is judged wherever the backend hands out fences,
 * fencing on or off: with it off, an accepted stale write is exactly the evidence of a lost lock. The
 * `lease` check judges the clients' own beliefs instead (grants, `validUntil`, ends, recorded by every
 * lock workload's client): no two grants of one resource believed valid at once, whatever the fencing.
 */

/**
 * How late a grant's first reading in a client process may find it before the lease check calls it an
 * `expired-grant` (the checker's own default is 1 ms). Between the adapter's last validity check and the
 * client's read lie two awaits; on these shared, loaded cores that gap reached 4.41 ms (12 of 2 000 000
 * over 1 ms, load 5.4, #13 review), which convicted nothing yet would convict a correct adapter handing out a
 * lease with a few ms left. The adapter bug this check exists for handed out grants 7-365 ms late
 * (etcd-expired-grant-handed-out, whole mutants run of 2026-12-03), so 5 ms keeps every such conviction.
 */
export const EXPIRED_GRANT_GRACE_MS = 5;

export function checkersFor(plan: CheckPlan): Record<string, Checker<History>> {
  const fences: Record<string, Checker<History>> = plan.fenced ? { fences: judge(checkFences) } : {};
  const inventory = judge((h) => checkInventory(h, { initialStock: plan.initialStock }));
  const lease = judge((h) => checkLeases(h, { expiredGraceMs: EXPIRED_GRANT_GRACE_MS }));
  // A healed fault is excused for what the backend needs to recover (an election), not a whole bound:
  // with settle = bound, no stretch of a short run was ever convictable (R4 F2).
  const boundMs = livenessBoundMs(plan.ttlMs);
  const settleMs = livenessSettleMs(plan.backend, plan.ttlMs);
  // A client's own stall of a TTL or more is excused like a paused client (livenessWithStalls).
  const liveness = judge((h) =>
    livenessAndAfterHeal(h, { boundMs, settleMs }, plan.ttlMs, plan.recoveredAt ?? []),
  );
  // Every client records its close() with its bound, so every workload has something to judge here.
  const bounds = judge((h) =>
    checkBounds(h, { slackMs: BOUNDS_SLACK_MS, ...(plan.clients ? { clients: plan.clients } : {}) }),
  );
  switch (plan.workload) {
    case 'inventory':
      return { inventory, ...fences, lease, liveness, bounds };
    case 'cas':
      return { inventory, bounds };
    case 'mutex': {
      const mutex = plan.fencing && plan.fenced ? checkMutexWithinLeases : (h: History) => checkMutex(h);
      return { mutex: judge(mutex), ...fences, lease, liveness, bounds };
    }
    case 'election':
      return { election: judge(checkElection), bounds };
    case 'cron':
      // Cron's workers never wait (one tryAcquire per tick): leases and bounds, no liveness.
      return { cron: judge((h) => checkCron(h)), lease, bounds };
    case 'semaphore':
    case 'rwlock':
      // Shared grants overlap by design: their own checks replace mutex, fences, lease and liveness.
      return { ...sharedLockCheckers(plan.workload, Boolean(plan.fencing && plan.fenced)), bounds };
  }
}

/** Overlaps listed by the mutex check before it is narrowed to leases (all of them, not the default 1 000). */
const ALL_OVERLAPS = 1_000_000;

/**
 * The mutex check where the resource refuses stale fences: an overlap counts only if the later section
 * entered while the earlier holder still believed its lease valid (its window as the lease check reads
 * it: until its release, its `held` read false, or its latest `validUntil`), or without a higher fence.
 *
 * Why: the contract promises one valid lease at a time, and a lease ends at its `validUntil`. A client
 * whose section runs past that (the mutex workload holds for the window whatever is left of the lease,
 * and the resource stamps an entry tens of ms after the client asked on a loaded machine) is no longer
 * protected by the lock but by the fence: once a higher fence has entered, the resource refuses the old
 * holder's fenced accesses, and an accepted stale one is the fences check's conviction. Seen at a 50 ms
 * TTL on etcd with no fault: a holder granted with 17 ms of validity left, stamped inside 55 ms after it
 * asked, left 60 ms later; the next waiter was granted 60 ms after the first lease had ended by its
 * holder's own reading; the lease check was clean. With fencing off nothing protects the overrun and
 * every overlap still convicts.
 */
export function checkMutexWithinLeases(
  history: History,
): CheckResult<MutexResult['violations'][number], MutexStats & { overlapsPastLease: number }> {
  const result = checkMutex(history, { maxViolations: ALL_OVERLAPS });
  if (result.verdict !== 'illegal') return { ...result, stats: { ...result.stats, overlapsPastLease: 0 } };
  /**
   * Each grant's window, by holder and fence. A fence names one grant only while the counter survives: a
   * Redis restarted without persistence hands fences out from 1 again, so one holder can hold the same
   * fence twice, and the section's own grant is the latest one granted before the section began.
   */
  const windows = new Map<string, { start: number; end: number }[]>();
  for (const w of leaseWindows(history).windows) {
    if (w.fence === undefined) continue;
    const key = `${String(w.process)} ${w.fence}`;
    const list = windows.get(key) ?? [];
    list.push({ start: w.start, end: w.end });
    windows.set(key, list);
  }
  const endOf = (client: unknown, fence: string, sectionStart: number): number | undefined => {
    let found: { start: number; end: number } | undefined;
    for (const w of windows.get(`${String(client)} ${fence}`) ?? []) {
      if (w.start <= sectionStart && (found === undefined || w.start > found.start)) found = w;
    }
    return found?.end;
  };
  const violations = result.violations.filter((v) => {
    const { first, second } = v;
    if (first.fence === undefined || second.fence === undefined) return true;
    if (BigInt(second.fence) <= BigInt(first.fence)) return true;
    const end = endOf(first.client, first.fence, first.start);
    return end === undefined || second.start < end;
  });
  const pastLease = result.violations.length - violations.length;
  return {
    verdict: violations.length > 0 ? 'illegal' : 'ok',
    violations: violations.slice(0, 1_000),
    stats: { ...result.stats, overlaps: violations.length, overlapsPastLease: pastLease },
  };
}

/**
 * Liveness (`livenessWithStalls`) and, in the same result, whether anyone was granted after the final heal
 * (`checkUnavailableAfterHeal`, on the history with each healed fault held until its servers were seen serving).
 * Starvation counts only time spent waiting for a free lock: acquires that all fail at once through the
 * recovery phase (#17) starve nobody, yet the run showed no lock at all once the servers served.
 */
export function livenessAndAfterHeal(
  history: History,
  options: { boundMs: number; settleMs: number },
  ttlMs: number | undefined,
  recoveredAt: readonly { fault: string; atNs: number }[] = [],
) {
  const result = livenessWithStalls(history, options, ttlMs, recoveredAt);
  const recoveries = recoveryFaults(history, recoveredAt).events;
  const afterHeal = checkUnavailableAfterHeal(
    recoveries.length > 0 ? [...history, ...recoveries] : history,
    options.settleMs,
  );
  return {
    ...result,
    verdict: afterHeal.verdict === 'illegal' ? ('illegal' as const) : result.verdict,
    violations: [...result.violations, ...afterHeal.violations],
    stats: { ...result.stats, ...afterHeal.stats },
  };
}

/** The fault name a client's own stall is judged under by the liveness check (one per client process). */
export const CLIENT_STALL = 'client-stall';

/**
 * The clients' own stalls of at least one TTL (measured by each client, client/stalls.ts, and recorded
 * on its `close` op) as nemesis faults in force for their length, for the liveness check only.
 *
 * Why: liveness's bound (max(2 s, 2 × TTL) of waiting while the lock is free and no fault is in force)
 * presumes clients that run. A client process that does not run for a TTL loses what only it could
 * keep: its etcd session's validity (counted from its last answered keep-alive's send), a grant that
 * arrives still valid; the harness's own `pause-client` fault does exactly this and is excused. Found
 * at a 50 ms TTL on etcd with no fault: every liveness conviction (2 of 5 seeds at load 0-12, 5 of 5 at
 * load 17-20) was a stretch of acquires failing "etcd session expired at once" (each session granted
 * arrived past its 50 ms); a fresh process's first LeaseGrant took 180-470 ms and the event loop of a
 * probe process was held up to 197 ms (10:09-10:11 UTC, load 12-24). The stall is excused only while
 * it lasts, plus the backend's settle: a lock stuck for good is still convicted, and a run's stalls,
 * their count and the longest, are in the liveness stats.
 */
export function clientStallFaults(
  history: History,
  ttlMs: number | undefined,
): { events: HistoryEvent[]; count: number; longestMs: number } {
  const events: HistoryEvent[] = [];
  let count = 0;
  let longestMs = 0;
  let index = history.length;
  for (const e of history) {
    if (e.f !== 'close' || e.type !== 'invoke' || typeof e.value !== 'object' || e.value === null) continue;
    const { stalls, longestStallMs } = e.value as { stalls?: unknown; longestStallMs?: unknown };
    if (typeof longestStallMs === 'number' && longestStallMs > longestMs) longestMs = longestStallMs;
    if (ttlMs === undefined || !Array.isArray(stalls)) continue;
    const fault = `${CLIENT_STALL} ${String(e.process)}`;
    for (const stall of stalls) {
      if (!Array.isArray(stall)) continue;
      const [start, lengthMs] = stall as unknown[];
      if (typeof start !== 'number' || typeof lengthMs !== 'number' || !(lengthMs >= ttlMs)) continue;
      count++;
      const end = start + lengthMs * 1e6;
      events.push(
        { index: index++, time: start, process: 'nemesis', type: 'invoke', f: 'start', value: { fault } },
        { index: index++, time: start, process: 'nemesis', type: 'ok', f: 'start', value: { fault } },
        { index: index++, time: end, process: 'nemesis', type: 'ok', f: 'stop', value: { fault } },
      );
    }
  }
  return { events, count, longestMs };
}

/**
 * Liveness with the clients' own stalls of a TTL or more excused (clientStallFaults). A run that passes
 * only thanks to such a stall outside every fault of the nemesis (whose own pauses are excused anyway)
 * was judged between its stalls only, so it does not pass: `unknown`, saying why; `illegal` if a
 * stretch between them still starved; `ok` if it passes without the excuse too. At a 50 ms TTL on a loaded 2-core machine most runs are so; at the default 1 s a stall of
 * a whole TTL is rare, and such a run is judged as before.
 */
export function livenessWithStalls(
  history: History,
  options: { boundMs: number; settleMs: number },
  ttlMs: number | undefined,
  recoveredAt: readonly { fault: string; atNs: number }[] = [],
) {
  const recoveries = recoveryFaults(history, recoveredAt);
  // Judged with each healed fault held until its servers were seen serving again (measured).
  if (recoveries.events.length > 0) history = [...history, ...recoveries.events];
  const stalls = clientStallFaults(history, ttlMs);
  const judged = stalls.events.length > 0 ? [...history, ...stalls.events] : history;
  const result = checkLiveness(judged, options);
  const faults = stalls.events.length > 0 ? faultWindows(history) : [];
  let outsideFaults = 0;
  for (let i = 1; i < stalls.events.length; i += 3) {
    const start = stalls.events[i]!.time;
    const end = stalls.events[i + 1]!.time;
    if (!faults.some((f) => f.start <= end && start <= f.end + options.settleMs * 1e6)) outsideFaults++;
  }
  const stats = {
    ...result.stats,
    recoveries: recoveries.count,
    longestRecoveryMs: recoveries.longestMs,
    clientStalls: stalls.count,
    clientStallsOutsideFaults: outsideFaults,
    longestClientStallMs: stalls.longestMs,
  };
  // Unknown only when the excuse is what cleared the run: judged without it, it passes as it is.
  if (result.verdict === 'ok' && outsideFaults > 0 && checkLiveness(history, options).verdict !== 'ok') {
    return {
      ...result,
      verdict: 'unknown' as const,
      stats,
      error:
        `judged only between ${outsideFaults} client stall(s) of at least the TTL (${ttlMs} ms) outside any fault ` +
        `(longest ${stalls.longestMs} ms): a client that does not run for a TTL cannot keep a lease, so the lock's ` +
        'liveness is not shown by this run',
    };
  }
  return { ...result, stats };
}

/**
 * Each healed fault held in force until its independent heal probe first saw the servers serving again
 * (`observed.healed`, a quorum request through the node it was aimed at; run.json keeps it), as a
 * nemesis fault `recovering <fault>` from the fault's stop to then, for the liveness check only; the
 * backend's settle follows it as it follows every fault.
 *
 * Why: after an `isolate` on etcd 3.4 (no pre-vote) the rejoining member's higher term makes the leader
 * step down, and elections on a loaded machine can fail several times: measured 2026-12-03 10:34-10:37
 * UTC, no leader for 4.5 s after a heal (terms 3 to 7 in the members' logs), and in 6 of 19 runs the
 * starved stretch (2.1-3.6 s of waiting) ended within 0.4 s of the heal probe's first answered quorum
 * request, 2.4-4.7 s after the heal, where the settle (one TTL) excused 1 s. The servers not serving is
 * the fault's effect, measured, not the lock's: a lock still stuck after they serve is convicted.
 */
export function recoveryFaults(
  history: History,
  recoveredAt: readonly { fault: string; atNs: number }[],
): { events: HistoryEvent[]; count: number; longestMs: number } {
  const events: HistoryEvent[] = [];
  let longestMs = 0;
  let index = history.length + 1_000_000;
  for (const { fault, atNs } of recoveredAt) {
    // The fault's last stop at or before the probe saw it healed.
    let stop: number | undefined;
    for (const e of history) {
      if (e.process !== 'nemesis' || e.f !== 'stop' || e.type !== 'ok' || e.time > atNs) continue;
      const named = (e.value as { fault?: unknown } | null)?.fault;
      if (named === fault && (stop === undefined || e.time > stop)) stop = e.time;
    }
    if (stop === undefined || atNs <= stop) continue;
    longestMs = Math.max(longestMs, Math.round((atNs - stop) / 1e6));
    const name = `recovering ${fault}`;
    events.push(
      { index: index++, time: stop, process: 'nemesis', type: 'invoke', f: 'start', value: { fault: name } },
      { index: index++, time: stop, process: 'nemesis', type: 'ok', f: 'start', value: { fault: name } },
      { index: index++, time: atNs, process: 'nemesis', type: 'ok', f: 'stop', value: { fault: name } },
    );
  }
  return { events, count: events.length / 3, longestMs };
}
