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

/** The ops that ask for a lock: a client stopped while one is outstanding has a request in flight. */
const ACQUIRES = new Set(['acquire']);
/** Ops that grant a lock or leadership: another one during the stall is what the fault waits for. */
const GRANTS = new Set(['acquire', 'campaign', 'lock']);
const ms = (ns: number) => Math.round(ns / 1e6);

/** The latency every client link gets while the fault waits and acts: the first request's round trip is 2×. */
export const stallAcquireLatencyMs = (ttlMs: number): number =>
  Math.min(250, Math.max(50, Math.round(ttlMs / 10)));

/**
 * `stall-acquire`: a client stopped (SIGSTOP) *while its acquire is outstanding*, its first request in
 * flight, for longer than the session and until another client has been granted; then continued. What
 * an adapter does between the round trips of one acquire (a fence drawn apart from the grant, a grant
 * whose answer comes back expired) meets a world that moved on meanwhile: the lock was granted to
 * someone else, fences were drawn after it.
 *
 * The stop comes from the coordinator, a few ms after the client's `acquire` invoke reaches it: on
 * loopback every request would be answered by then. So every client link is slowed first (latency
 * `stallAcquireLatencyMs`, no jitter: no reordering) and the first request of the acquire is still on
 * its way when the stop lands; the servers receive it and answer into the stopped client's socket. The
 * latency is a fault of its own in the history (`stall-acquire-latency`, from when it is set until it is
 * healed) and the stop another (`stall-acquire`, from the stop, naming the client), so no checker
 * excuses the stopped client's ops from before it was stopped. After the stall the nemesis records when
 * the stalled acquire completed and whether that was after the stop (`inFlight`): a completion from
 * before it means the stop missed the acquire (a loaded coordinator) and the pass tested a holder instead.
 */
export async function stallAcquire(context: NemesisContext, waitMs: number): Promise<FaultWindowSummary> {
  const { faults, nodes } = context.deployment;
  const { startedAt, deployment } = context;
  const latencyMs = stallAcquireLatencyMs(context.ttlMs);
  const slowed = await nemesisOp(
    context,
    'start',
    { fault: 'stall-acquire-latency', nodes: [...nodes], latencyMs },
    async () => {
      for (const node of nodes) await faults.latency(node, { ms: latencyMs, jitterMs: 0 });
    },
  );
  if (!slowed.ok) return { fault: 'stall-acquire', target: {}, applied: false, error: slowed.error };
  // Independent probe (#20): requests through the proxy take the added latency.
  const node = { node: nodes[0] as string, nodes: [...nodes] };
  const slow = observePhase(deployment, 'latency', node, 'started', Math.max(500, waitMs), startedAt);
  let summary: FaultWindowSummary;
  try {
    summary = await stallOnAcquire(context, waitMs, latencyMs);
  } finally {
    await nemesisOp(context, 'stop', { fault: 'stall-acquire-latency', nodes: [...nodes] }, () =>
      faults.heal(),
    );
  }
  const started = await slow;
  const healed = await observePhase(deployment, 'latency', node, 'healed', 5_000, startedAt);
  if (!summary.applied) return summary;
  // Both parts of the fault (#20): the links slowed, and the client stopped (/proc state T) and continued.
  const stop = summary.observed;
  const parts = ['links', `client ${summary.target.client}`];
  return {
    ...summary,
    observed: {
      started: allSeen([started, stop?.started], parts) as ObservedPhase,
      healed: allSeen([healed, stop?.healed], parts) as ObservedPhase,
    },
  };
}

/** The stop itself, while the links are slow: see `stallAcquire`. */
async function stallOnAcquire(
  context: NemesisContext,
  waitMs: number,
  latencyMs: number,
): Promise<FaultWindowSummary> {
  const { sessionMs } = context;
  const marginMs = Math.min(200, Math.max(50, Math.round(context.ttlMs / 4)));
  const minStallMs = sessionMs + marginMs;
  const maxStallMs = 2 * sessionMs + 2_000;
  let stalled: ClientHandle | undefined;
  let stoppedAt = 0;
  let completion: Promise<{ event: UnindexedEvent; client: ClientHandle } | undefined> | undefined;
  const started = await aimedStart(
    context,
    { fault: 'stall-acquire', latencyMs },
    () =>
      context.nextEvent((event) => event.type === 'invoke' && ACQUIRES.has(event.f), waitMs, context.signal),
    `no client invoked an acquire within ${waitMs} ms`,
    async (seen) => {
      // Stopped in the same turn as the invoke was seen (microtasks only in between).
      seen.client.pause();
      stalled = seen.client;
      stoppedAt = nowNs();
      // The stalled acquire's outcome, armed now. Its next acquire event is its completion, unless the
      // completion came in the same batch as the invoke (already passed): then the next is an invoke.
      const index = seen.client.index;
      completion = context.nextEvent(
        (event, client) => client.index === index && ACQUIRES.has(event.f),
        maxStallMs + 5_000,
        context.signal,
      );
      return {
        client: index,
        process: seen.event.process,
        afterInvokeMs: Math.round((stoppedAt - seen.event.time) / 1e5) / 10,
      };
    },
  );
  if (!started.ok || !stalled) {
    const error = started.ok ? 'no client' : started.error;
    return { fault: 'stall-acquire', target: {}, applied: false, error };
  }
  const client = stalled;
  context.progress(`nemesis: stalled client ${client.index} in its acquire (session ${sessionMs} ms)`);
  // Independent probe (#20): /proc shows the client stopped during the stall, and running after it.
  const stopped = observeClientStop(client.pid, 'started', minStallMs, context.startedAt);
  let other: { event: UnindexedEvent; client: ClientHandle } | undefined;
  try {
    const next = context.nextEvent(
      (event, c) =>
        c.index !== client.index && event.type === 'ok' && GRANTS.has(event.f) && event.time > stoppedAt,
      maxStallMs,
      context.signal,
    );
    await sleep(minStallMs, context.signal);
    other = await next;
    if (other) await sleep(marginMs, context.signal);
  } finally {
    // Never left stopped, whatever happens.
    client.resume();
  }
  const running = observeClientStop(client.pid, 'healed', 2_000, context.startedAt);
  let evidence: Record<string, unknown> = {
    ...started.result,
    stalledMs: ms(nowNs() - stoppedAt),
    otherClient: other?.client.index ?? null,
    otherGrantedAfterMs: other ? ms(other.event.time - stoppedAt) : null,
    cutShort: context.signal.aborted,
  };
  await nemesisOp(context, 'stop', { fault: 'stall-acquire', client: client.index }, async () => {
    // Bounded: the acquire was answered after the stop (in flight, as meant), or before it (missed).
    const bound = new AbortController();
    const done = await Promise.race([completion, sleep(2_000, bound.signal).then(() => undefined)]);
    bound.abort();
    const answered = done !== undefined && done.event.type !== 'invoke';
    const inFlight = done === undefined ? null : answered && done.event.time > stoppedAt;
    evidence = {
      ...evidence,
      inFlight,
      acquireOutcome: answered ? done.event.type : null,
      completedAfterStopMs: answered ? ms(done.event.time - stoppedAt) : null,
    };
    return evidence;
  });
  const observed = {
    started: await stopped,
    healed: await running,
  };
  return { fault: 'stall-acquire', target: { client: client.index }, applied: true, evidence, observed };
}
