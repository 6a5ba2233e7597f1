import type {
  EffectQuery,
  ObservableFault,
  Observation,
  PromotionFaultName,
  PromotionQuery,
} from '@fencekit/cluster';
import type { Deployment } from '../backends/types.js';
import type { CheckOutcome } from '../check/check.js';
import { allSeen } from './client-probes.js';
import type { FaultTarget } from './faults.js';

/** What a probe saw in one phase of a fault, and when (ms from the run's start, as the schedule counts). */
export interface ObservedPhase {
  seen: boolean;
  detail: string;
  atMs: number;
}

/** The independent probes' view of one fault: its effect after the start, its absence after the heal. */
export interface FaultObservation {
  started?: ObservedPhase;
  healed?: ObservedPhase;
}

/** The cluster fault whose probe sees each harness fault's effect. */
const EFFECT_OF: Readonly<Record<string, ObservableFault | PromotionFaultName>> = {
  partition: 'partition',
  isolate: 'partition',
  'cut-clients': 'cutClients',
  kill: 'kill',
  'pause-server': 'pause',
  'clock-jump': 'clock',
  'clock-drift': 'clock',
  'clock-jump-minority': 'clock',
  'latency-minority': 'latency',
  latency: 'latency',
  // The aimed server faults: flicker kills and restarts a node, hang-at-close stops one while the clients close.
  flicker: 'kill',
  'quorum-loss': 'kill',
  'hang-at-close': 'pause',
  // Replicated Redis: a replica of the node primary by the authority (Sentinels, cluster views), and for a split
  // brain the old one still calling itself primary; healed: the old primary a replica again.
  failover: 'failover',
  'failover-lagged': 'failover',
  'split-brain': 'splitBrain',
};

/**
 * Runs the fault's probe for one phase, bounded by `timeoutMs`, and stamps when it saw what it saw. `startedAt` is
 * the run's start on performance.now(). A probe that fails is recorded as not seen, with the reason; so is a fault
 * that has no probe (or a deployment without probes): applied but not observed, which keeps the run from `ok`.
 */
export async function observePhase(
  deployment: Deployment,
  fault: string,
  target: FaultTarget,
  phase: EffectQuery['phase'],
  timeoutMs: number,
  startedAt: number,
  /** The phase's end (a start probe's: the heal begins); nothing read after it counts. */
  cutOff?: AbortSignal,
): Promise<ObservedPhase> {
  const effect = Object.hasOwn(EFFECT_OF, fault) ? EFFECT_OF[fault] : undefined;
  // A fault on several servers (a minority's clocks or links) is seen only where each of them shows it.
  const several = target.nodes && target.nodes.length > 1 ? target.nodes : undefined;
  if (several && effect !== undefined && effect !== 'partition') {
    const each = several.map((node) =>
      observePhase(deployment, fault, { node }, phase, timeoutMs, startedAt, cutOff),
    );
    return allSeen(await Promise.all(each), several) as ObservedPhase;
  }
  const called = performance.now();
  if (effect === undefined || !deployment.faults.observe) {
    const why = effect === undefined ? `no independent probe for ${fault}` : 'this deployment has no probes';
    return { seen: false, detail: why, atMs: Math.round(called - startedAt) };
  }
  if (effect === 'failover' || effect === 'splitBrain') {
    if (target.node === undefined) {
      return { seen: false, detail: `${fault} has no node to probe`, atMs: Math.round(called - startedAt) };
    }
    const promotion: PromotionQuery = {
      fault: effect,
      node: target.node,
      phase,
      timeoutMs: Math.max(500, Math.round(timeoutMs)),
      ...(cutOff ? { signal: cutOff } : {}),
    };
    // Only replicated Redis offers failover, and its probes are @fencekit/cluster's, which take a PromotionQuery.
    const observe = deployment.faults.observe as unknown as (q: PromotionQuery) => Promise<Observation>;
    return probed(observe.call(deployment.faults, promotion), called, startedAt);
  }
  const query: EffectQuery = {
    fault: effect,
    phase,
    timeoutMs: Math.max(500, Math.round(timeoutMs)),
    ...(cutOff ? { cutOff } : {}),
    // A partition's probe also tries a quorum request through a member of the smaller side (halves[0]).
    ...((target.node ?? target.halves?.[0]?.[0]) ? { node: target.node ?? target.halves?.[0]?.[0] } : {}),
  };
  return probed(deployment.faults.observe(query), called, startedAt);
}

/** A probe's answer stamped on the run's clock; a probe that fails (or is cut off) is not seen, with the reason. */
async function probed(
  answer: Promise<Observation>,
  called: number,
  startedAt: number,
): Promise<ObservedPhase> {
  const observation: Observation = await answer.catch((error: Error) => ({
    seen: false,
    detail: `probe failed: ${error.message}`,
    afterMs: Math.round(performance.now() - called),
  }));
  return {
    seen: observation.seen,
    detail: observation.detail,
    atMs: Math.round(called + observation.afterMs - startedAt),
  };
}

/** Why each applied fault's effect was not confirmed: never seen after its start, or not seen gone after its heal. */
export function unconfirmedFaults(
  faults: readonly {
    fault: string;
    target: FaultTarget;
    applied: boolean;
    observed?: FaultObservation;
  }[],
): string[] {
  const problems: string[] = [];
  for (const f of faults) {
    if (!f.applied || !f.observed) continue; // not applied, or recorded before faults were probed
    const where = f.target.node
      ? ` on ${f.target.node}`
      : f.target.client === undefined
        ? ''
        : ` on client ${f.target.client}`;
    const { started, healed } = f.observed;
    if (!started?.seen) {
      problems.push(
        `${f.fault}${where} was applied but its effect was not observed (${started?.detail ?? 'no probe ran'})`,
      );
    } else if (healed && !healed.seen) {
      problems.push(`${f.fault}${where}: its effect was not seen to end after the heal (${healed.detail})`);
    }
  }
  return problems;
}

/**
 * Each fault the run asked for that it never applied (the schedule had no room for it, the seeded pick left it out,
 * its moment never came): a run labelled with a fault that never happened says nothing about that fault (#20).
 */
export function unappliedFaults(
  requested: readonly string[],
  faults: readonly { fault: string; applied: boolean }[],
): string[] {
  return requested
    .filter((name) => !faults.some((f) => f.fault === name && f.applied))
    .map((name) => `fault ${name} requested but never applied`);
}

/**
 * A run whose faults were applied but not seen to take effect (or to end) cannot be cleared: what the checkers
 * judged may have run without the fault. Adds a `fault-effects` entry (unknown) and lowers an `ok` verdict to
 * `unknown`; a violation found stays `illegal`.
 */
export function withFaultEffects(
  outcome: CheckOutcome,
  faults: Parameters<typeof unconfirmedFaults>[0],
  /** The faults the run asked for: one never applied leaves the run at best `unknown` too. */
  requested: readonly string[] = [],
): CheckOutcome {
  const problems = [...unappliedFaults(requested, faults), ...unconfirmedFaults(faults)];
  if (problems.length === 0) return outcome;
  return {
    ...outcome,
    verdict: outcome.verdict === 'ok' ? 'unknown' : outcome.verdict,
    checkers: {
      ...outcome.checkers,
      'fault-effects': {
        verdict: 'unknown',
        violationCount: 0,
        violations: [],
        stats: { unconfirmed: problems.length },
        error: problems.join('; '),
      },
    },
  };
}
