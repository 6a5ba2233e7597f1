import { sleep } from '../workloads/util.js';
import { runAimedFault } from './aimed.js';
import { observeClientStop } from './client-probes.js';
import {
  aimedStart,
  type ClientHandle,
  type FaultWindowSummary,
  type NemesisContext,
  nemesisOp,
  until,
} from './context.js';
import { CLOSING_FAULT, isAimedFault, startServerFault } from './faults.js';
import { observePhase } from './observation.js';
import { seededRandom } from './random.js';
import type { ScheduledFault } from './schedule.js';

export {
  aimedStart,
  type ClientHandle,
  FaultNotApplied,
  type FaultWindowSummary,
  type NemesisContext,
  nemesisOp,
  until,
  type WindowWait,
} from './context.js';

/** Pauses the next client to open its window, for `durationMs`, as one start/stop pair. */
export async function pauseClient(
  context: NemesisContext,
  durationMs: number,
  waitMs: number,
): Promise<FaultWindowSummary> {
  let client: ClientHandle | undefined;
  // Recorded as it acts: the client is stopped as its window opens, not while the nemesis waits for it.
  const started = await aimedStart(
    context,
    { fault: 'pause-client' },
    () => context.nextWindow(waitMs, context.signal, { pause: true }),
    `no client reached its window within ${waitMs} ms`,
    async (paused) => {
      client = paused;
      return { client: paused.index, process: paused.process };
    },
  );
  if (!started.ok) return { fault: 'pause-client', target: {}, applied: false, error: started.error };
  if (!client) return { fault: 'pause-client', target: {}, applied: false };
  const paused = client;
  context.progress(`nemesis: paused client ${paused.index} for ${durationMs} ms`);
  // Independent probe (#20): /proc shows the client stopped while it is held, and running after it resumed.
  const stopped = observeClientStop(paused.pid, 'started', durationMs, context.startedAt);
  // Held even through an abort, so the client is never left frozen: the stop below always runs.
  await sleep(durationMs, context.signal);
  await nemesisOp(context, 'stop', { fault: 'pause-client', client: paused.index }, async () =>
    paused.resume(),
  );
  const observed = {
    started: await stopped,
    healed: await observeClientStop(paused.pid, 'healed', 2_000, context.startedAt),
  };
  return { fault: 'pause-client', target: { client: paused.index }, applied: true, observed };
}

/** Runs a seeded schedule to its end (or until aborted); every started fault is healed. */
export async function runSchedule(
  context: NemesisContext,
  schedule: readonly ScheduledFault[],
): Promise<FaultWindowSummary[]> {
  const random = seededRandom(context.seed ^ 0x5eed);
  const applied: FaultWindowSummary[] = [];
  for (const [index, item] of schedule.entries()) {
    if (!(await until(context, item.atMs))) break;
    if (item.fault === 'pause-client') {
      applied.push(await pauseClient(context, item.durationMs, item.durationMs));
      continue;
    }
    if (isAimedFault(item.fault)) {
      // The fault is sized by the session; the schedule only says how long to wait for its moment.
      const summary = await runAimedFault(item.fault, context, random, item.waitMs ?? item.durationMs);
      // An aimed fault that acted but brought no probe of its effect cannot clear a run (#20).
      if (summary.applied && !summary.observed) summary.observed = { started: unprobed(context, item.fault) };
      applied.push(summary);
      continue;
    }
    if (item.fault === CLOSING_FAULT) continue;
    const fault = item.fault;
    let heal: (() => Promise<void>) | undefined;
    const started = await nemesisOp(context, 'start', { fault }, async () => {
      const s = await startServerFault(fault, context.deployment, random, context.ttlMs);
      heal = s.heal;
      return s.target;
    });
    if (!started.ok) {
      applied.push({ fault, target: {}, applied: false, error: started.error });
      context.progress(`nemesis: ${fault} not applied: ${started.error}`);
      continue;
    }
    context.progress(`nemesis: ${fault} on ${JSON.stringify(started.result)}`);
    const summary: FaultWindowSummary = { fault, target: started.result, applied: true };
    applied.push(summary);
    // Independent probes of the effect (#20): beside the window, bounded by it, so it keeps its length.
    const { deployment, startedAt } = context;
    // Cut off as the heal begins: a look that straddles the heal would read the heal's own step as the effect.
    const healing = new AbortController();
    const effect = observePhase(
      deployment,
      fault,
      started.result,
      'started',
      item.durationMs,
      startedAt,
      healing.signal,
    );
    await sleep(item.durationMs, context.signal);
    healing.abort();
    const stopped = await nemesisOp(context, 'stop', { fault, ...started.result }, async () => heal?.());
    const shown = await effect;
    // Up to the next fault (at least 5 s: an old leader takes seconds to rejoin), at most 10 s.
    const gapMs = startedAt + (schedule[index + 1]?.atMs ?? 0) - performance.now();
    const healMs = Math.min(10_000, Math.max(5_000, gapMs));
    const gone = stopped.ok
      ? await observePhase(deployment, fault, started.result, 'healed', healMs, startedAt)
      : undefined;
    summary.observed = { started: shown, ...(gone ? { healed: gone } : {}) };
  }
  return applied;
}

/** The record of a fault applied with no independent probe of its effect: not seen, and why. */
function unprobed(context: NemesisContext, fault: string) {
  const atMs = Math.round(performance.now() - context.startedAt);
  return { seen: false, detail: `no independent probe for ${fault}`, atMs };
}

/** The final heal before the recovery phase: undo everything, whatever the schedule did. */
export async function healAll(context: NemesisContext): Promise<void> {
  await nemesisOp(context, 'stop', { fault: 'all' }, () => context.deployment.faults.heal());
}
