import { nowNs } from '../history/clock.js';
import type { UnindexedEvent } from '../history/event.js';
import { sleep } from '../workloads/util.js';
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

/**
 * `drift-majority`: a majority of the servers' clocks run slightly fast (`DRIFT_MAJORITY_RATE`), and a
 * client granted under it is stopped (SIGSTOP) right after its validity check, while it holds, as
 * `stall-holder` does, until another client is granted (and a short margin) or for two sessions and 2 s
 * at most. A key set on a fast server lives TTL / rate of real time: on the majority a quorum needs, the
 * lock is free `TTL × (1 − 1/rate)` (40 ms at a 5 s TTL) before the holder's TTL, counted from its
 * request's send, has run out. A lease that subtracts a drift allowance larger than that ended before;
 * one that does not is still believed valid when the next waiter (retrying on the servers' PTTL) is
 * granted: the lease check sees the two overlap.
 *
 * Two faults in the history: the clocks (`drift-majority`, from the first skew to the heal, naming the
 * servers and the rate) and the stopped holder (`stall-holder`, from the stop, naming the client, so the
 * bounds check exempts its ops only from then). The holder must have asked for its grant after the
 * clocks were skewed, so its keys were set on the fast clocks. Each fast server's clock is probed after
 * the skew and after the heal (the cluster's clock probe: a small drift is measured over a window long
 * enough for it to show).
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
  const stalls: Stall[] = [];
  try {
    // The first holder is any client granted under the drift: most grants under contention are made by
    // a release handing the lock to a waiter, on keys set later than the send its validity counts from,
    // which leaves the drift no window. The client granted while it is stalled was granted by its own
    // request, on the fast majority's expired keys: its keys were set as it asked, so it is stalled too.
    const first = await stallHolderUnder(
      context,
      (client) => (client.grant?.askedAt ?? 0) > skewedAt,
      waitMs,
    );
    stalls.push(first);
    const next = first.other;
    if (next !== undefined) {
      const second = await stallHolderUnder(context, (client) => client.index === next, 2_000, first);
      stalls.push(second);
    }
  } finally {
    // Never left stopped: the last holder stalled waits for this (resume is idempotent).
    for (const stall of stalls) await stall.resume?.();
    await nemesisOp(context, 'stop', { fault: 'drift-majority', nodes: fast }, () => faults.heal());
  }
  const observed = { started: combined(await seenStarted), healed: combined(await probe('healed')) };
  const last = stalls.findLast((s) => s.client !== undefined);
  const target = { ...(last ? { client: last.client as number } : {}), node: fast[0] as string };
  const error = stalls.find((s) => s.error !== undefined)?.error;
  return {
    fault: 'drift-majority',
    target,
    // Applied: the clocks ran fast. The holders' stalls are evidence; without them the pass tested
    // nothing more than a drift the quorum absorbs (the error says why).
    applied: true,
    evidence: { nodes: fast, rate, stalls: stalls.map((s) => s.summary) },
    ...(error ? { error } : {}),
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

/** One holder stalled under the drift, and who was granted meanwhile. */
interface Stall {
  summary: Record<string, unknown>;
  client?: number;
  /** The client granted while this holder was stopped (granted by its own request). */
  other?: number;
  error?: string;
  /** Resumes the holder and records its stop (once the next one is stopped, so the two stalls overlap). */
  resume?: () => Promise<void>;
}

/**
 * The stall-holder part of `drift-majority`: the next client `accept` takes, stopped at its window (right
 * after its validity check), held at least a session and a margin and until another client is granted.
 * `previous` (a holder still stopped) is resumed once this one is stopped.
 */
async function stallHolderUnder(
  context: NemesisContext,
  accept: (client: ClientHandle) => boolean,
  waitMs: number,
  previous?: Stall,
): Promise<Stall> {
  const { sessionMs } = context;
  const marginMs = Math.min(200, Math.max(50, Math.round(context.ttlMs / 4)));
  const minStallMs = sessionMs + marginMs;
  const maxStallMs = 2 * sessionMs + 2_000;
  let holder: ClientHandle | undefined;
  let stoppedAt = 0;
  let started: Awaited<ReturnType<typeof aimedStart<ClientHandle, Record<string, unknown>>>>;
  try {
    started = await aimedStart(
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
  } finally {
    await previous?.resume?.();
  }
  if (!started.ok || !holder) {
    return { summary: {}, error: started.ok ? 'no holder' : started.error };
  }
  const stalled = holder;
  let other: { event: UnindexedEvent; client: ClientHandle } | undefined;
  let resumed = false;
  let evidence: Record<string, unknown> = {};
  const resume = async () => {
    if (resumed) return;
    resumed = true;
    stalled.resume();
    const value = {
      fault: 'stall-holder',
      client: stalled.index,
      ...evidence,
      stalledMs: ms(nowNs() - stoppedAt),
    };
    await nemesisOp(context, 'stop', value, async () => undefined);
  };
  try {
    const next = context.nextEvent(
      (event, client) =>
        client.index !== stalled.index &&
        event.type === 'ok' &&
        GRANTS.has(event.f) &&
        event.time > stoppedAt,
      maxStallMs,
      context.signal,
    );
    await sleep(minStallMs, context.signal);
    other = await next;
    if (other) await sleep(marginMs, context.signal);
  } catch (error) {
    await resume();
    throw error;
  }
  const grant = stalled.grant;
  const summary = {
    holder: stalled.index,
    validLeftMs: started.result.validLeftMs,
    otherClient: other?.client.index ?? null,
    // The other grant against the holder's own validity: positive = granted while the holder believed.
    otherGrantedBeforeHolderValidityEndMs:
      other && grant?.validUntil !== undefined ? ms(grant.validUntil - other.event.time) : null,
    cutShort: context.signal.aborted,
  };
  evidence = summary;
  // Resumed now unless a next holder is to be stopped first (the caller resumes it then, or at the end).
  const stall: Stall = {
    summary,
    client: stalled.index,
    ...(other && !context.signal.aborted ? { other: other.client.index } : {}),
    resume,
  };
  if (stall.other === undefined) await resume();
  return stall;
}
