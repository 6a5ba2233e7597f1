import { nowNs } from '../history/clock.js';
import type { UnindexedEvent } from '../history/event.js';
import { sleep } from '../workloads/util.js';
import { allSeen, observeClientStop } from './client-probes.js';
import {
  aimedStart,
  type ClientHandle,
  type FaultWindowSummary,
  type NemesisContext,
  nemesisOp,
} from './context.js';
import { type ObservedPhase, observePhase } from './observation.js';

/**
 * How fast the majority's clocks run: 0.8 % fast, inside Redlock's default drift allowance (1 % of the
 * TTL + 2 ms), so an adapter that subtracts the allowance stays safe and one that does not is exposed.
 */
export const DRIFT_MAJORITY_RATE = 1.008;

/** Ops that grant a lock or leadership: another one while the holder is stopped is what the fault waits for. */
const GRANTS = new Set(['acquire', 'campaign', 'lock']);
const ms = (ns: number) => Math.round(ns / 1e6);

/** A majority (⌊N/2⌋ + 1) of `nodes`, picked with the nemesis's seeded random. */
export function majorityOf(nodes: readonly string[], random: () => number): string[] {
  const shuffled = nodes.map((node) => ({ node, key: random() })).sort((a, b) => a.key - b.key);
  return shuffled.slice(0, Math.floor(nodes.length / 2) + 1).map((s) => s.node);
}

/** How long before the end of its own validity a stalled holder is let go, to leave and release. */
export const DRIFT_RELEASE_LEAD_MS = 40;
/** How long a stalled holder stays stopped after another client's grant was seen. */
const OTHER_GRANT_MARGIN_MS = 50;

/**
 * `drift-majority`: a majority of the servers' clocks run slightly fast (`DRIFT_MAJORITY_RATE`), and a
 * client granted under it is stopped (SIGSTOP) right after its validity check, while it holds, and let
 * go `DRIFT_RELEASE_LEAD_MS` before the validity it recorded at its grant ends (a critical section that
 * uses its whole lease, then leaves and releases), or 50 ms after another client is granted. A key set on a fast server lives TTL / rate of real
 * time: on the majority a quorum needs, the lock is free `TTL × (1 − 1/rate)` (79 ms at a 10 s TTL)
 * before a validity counted from the request's send has run out. A lease that subtracts a drift
 * allowance larger than that ended before (102 ms at 10 s for Redlock's 1 % + 2 ms): its holder has
 * left and released when the next client (polling: see `runSettings`) is granted. One that does not is
 * still believed valid, its holder still in its section: the lease check, and the resource's mutex
 * check, see the two overlap.
 *
 * Two faults in the history: the clocks (`drift-majority`, from the first skew to the heal, naming the
 * servers and the rate) and the stopped holder (`stall-holder`, from the stop, naming the client, so the
 * bounds check exempts its ops only from then). The holder must have asked for its grant after the
 * clocks were skewed, so its keys were set on the fast clocks. Each fast server's clock is probed after
 * the skew and after the heal (the cluster's clock probe: a small drift is measured over a window long
 * enough for it to show). The stop op records whether another client was granted while the holder was
 * stopped, and how long before the holder's validity ended.
 */
export async function driftMajority(
  context: NemesisContext,
  random: () => number,
  waitMs: number,
): Promise<FaultWindowSummary> {
  const { deployment, startedAt } = context;
  const { faults } = deployment;
  const fast = majorityOf(deployment.nodes, random);
  const rate = DRIFT_MAJORITY_RATE;
  const skewedAt = nowNs();
  const skewed = await nemesisOp(
    context,
    'start',
    { fault: 'drift-majority', nodes: fast, rate },
    async () => {
      for (const node of fast) await faults.clock(node, { offsetMs: 0, rate });
    },
  );
  if (!skewed.ok) return { fault: 'drift-majority', target: {}, applied: false, error: skewed.error };
  context.progress(`nemesis: drift-majority: ${fast.join(', ')} run at ${rate}x`);
  const probe = (phase: 'started' | 'healed') =>
    Promise.all(
      fast.map((node) => observePhase(deployment, 'clock-drift', { node }, phase, 10_000, startedAt)),
    );
  const seenStarted = probe('started');
  let stall: Stall;
  try {
    stall = await stallToValidityEnd(context, (client) => (client.grant?.askedAt ?? 0) > skewedAt, waitMs);
  } finally {
    await nemesisOp(context, 'stop', { fault: 'drift-majority', nodes: fast }, () => faults.heal());
  }
  const clocks = { started: combined(await seenStarted), healed: combined(await probe('healed')) };
  // The stalled holder is part of the fault (#20): /proc shows it stopped, and running after.
  const observed = stall.stop
    ? {
        started: allSeen([clocks.started, stall.stop.started], ['clocks', `client ${stall.client}`]),
        healed: allSeen([clocks.healed, stall.stop.healed], ['clocks', `client ${stall.client}`]),
      }
    : clocks;
  const target = { ...(stall.client === undefined ? {} : { client: stall.client }), node: fast[0] as string };
  return {
    fault: 'drift-majority',
    target,
    // Applied: the clocks ran fast. The holder's stall is evidence; without it the pass tested nothing
    // more than a drift the quorum absorbs (the error says why).
    applied: true,
    evidence: { nodes: fast, rate, ...stall.summary },
    ...(stall.error ? { error: stall.error } : {}),
    ...(observed.started ? { observed: observed as { started: ObservedPhase; healed?: ObservedPhase } } : {}),
  };
}

/** Every fast server's probe in one: seen only when seen on each; stamped when the last of them saw it. */
function combined(phases: readonly (ObservedPhase | undefined)[]): ObservedPhase | undefined {
  const known = phases.filter((p): p is ObservedPhase => p !== undefined);
  if (known.length === 0) return undefined;
  return {
    seen: known.length === phases.length && known.every((p) => p.seen),
    detail: known.map((p) => p.detail).join('; '),
    atMs: Math.max(...known.map((p) => p.atMs)),
  };
}

/** One holder stalled under the drift. */
interface Stall {
  summary: Record<string, unknown>;
  client?: number;
  error?: string;
  /** What /proc showed of the holder: stopped during the stall, running after it. */
  stop?: { started: ObservedPhase; healed: ObservedPhase };
}

/**
 * The stall part of `drift-majority`: the next client `accept` takes, stopped at its window (right after
 * its validity check), let go `DRIFT_RELEASE_LEAD_MS` before its recorded validity ends (a session and a
 * margin when it recorded none; two sessions and 2 s at most), or 50 ms after another client is granted.
 */
async function stallToValidityEnd(
  context: NemesisContext,
  accept: (client: ClientHandle) => boolean,
  waitMs: number,
): Promise<Stall> {
  const { sessionMs } = context;
  const maxStallMs = 2 * sessionMs + 2_000;
  let holder: ClientHandle | undefined;
  let stoppedAt = 0;
  const started = await aimedStart(
    context,
    { fault: 'stall-holder', sessionMs, under: 'drift-majority' },
    () => context.nextWindow(waitMs, context.signal, { pause: true, accept }),
    `no client granted under the drift reached its validity check within ${waitMs} ms`,
    async (client) => {
      holder = client;
      stoppedAt = nowNs();
      const grant = client.grant;
      return {
        client: client.index,
        process: client.process,
        validLeftMs: grant?.validUntil === undefined ? null : ms(grant.validUntil - stoppedAt),
      };
    },
  );
  if (!started.ok || !holder) return { summary: {}, error: started.ok ? 'no holder' : started.error };
  const stalled = holder;
  const validUntil = stalled.grant?.validUntil;
  const holdMs =
    validUntil === undefined
      ? sessionMs + 200
      : Math.min(maxStallMs, Math.max(0, ms(validUntil - nowNs()) - DRIFT_RELEASE_LEAD_MS));
  const stopped = observeClientStop(stalled.pid, 'started', Math.max(500, holdMs), context.startedAt);
  let other: { event: UnindexedEvent; client: ClientHandle } | undefined;
  try {
    // Let go at whichever comes first: the end of the hold, or another client's grant (and a short
    // margin, so the overlap, if the holder still believes, shows in its readings as it resumes).
    other = await context.nextEvent(
      (event, client) =>
        client.index !== stalled.index &&
        event.type === 'ok' &&
        GRANTS.has(event.f) &&
        event.time > stoppedAt,
      holdMs,
      context.signal,
    );
    if (other) await sleep(OTHER_GRANT_MARGIN_MS, context.signal);
  } finally {
    stalled.resume();
  }
  const running = observeClientStop(stalled.pid, 'healed', 2_000, context.startedAt);
  const summary = {
    holder: stalled.index,
    validLeftMs: started.result.validLeftMs,
    stalledMs: ms(nowNs() - stoppedAt),
    otherClient: other?.client.index ?? null,
    // Another grant while the holder was stopped, against the holder's own validity: positive = granted
    // while the holder still believed it held.
    otherGrantedBeforeHolderValidityEndMs:
      other && validUntil !== undefined ? ms(validUntil - other.event.time) : null,
    cutShort: context.signal.aborted,
  };
  await nemesisOp(
    context,
    'stop',
    { fault: 'stall-holder', client: stalled.index, ...summary },
    async () => undefined,
  );
  const stop = { started: await stopped, healed: await running };
  return { summary, client: stalled.index, stop };
}
