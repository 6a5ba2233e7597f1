import { nowNs } from '../history/clock.js';
import type { UnindexedEvent } from '../history/event.js';
import { sleep } from '../workloads/util.js';
import { runLinkFault } from './aimed-links.js';
import { clientLinks, endpointPorts, observeClientStop, observeLinksReset } from './client-probes.js';
import {
  aimedStart,
  type ClientHandle,
  type FaultWindowSummary,
  type NemesisContext,
  nemesisOp,
} from './context.js';
import { deleteWaiterKey } from './delete-waiter.js';
import { driftMajority } from './drift-majority.js';
import type { AimedFault } from './faults.js';
import { observePhase } from './observation.js';
import { requestMetOutage, type WatchedAnswer } from './outage-answer.js';
import { quorumLoss } from './quorum-loss.js';
import { pick } from './random.js';
import { stallAcquire } from './stall-acquire.js';

/**
 * Faults aimed at the lease promise ("no two leases on one resource valid at the same instant"). Each
 * waits for the moment a client is exposed (it holds, it releases) and acts then, so every pass tests
 * the promise instead of hoping a timer lands right. Every wait is bounded and ends on abort; a stopped
 * client is always resumed and a killed server always restarted, whatever happens.
 *
 * Durations are set by the session, not the TTL: a ZooKeeper lease lives as long as its session
 * (`sessionMs`, the negotiated timeout), an etcd lease as long as its lease TTL, which etcd rounds up
 * to whole seconds and to at least 1.5 election timeouts; Redis and Redlock keys live for the TTL.
 */
export function runAimedFault(
  fault: AimedFault,
  context: NemesisContext,
  random: () => number,
  waitMs: number,
): Promise<FaultWindowSummary> {
  switch (fault) {
    case 'stall-acquire':
      return stallAcquire(context, waitMs);
    case 'drift-majority':
      return driftMajority(context, random, waitMs);
    case 'stall-holder':
      return stallHolder(context, waitMs);
    case 'flicker':
      return flicker(context, random, waitMs);
    case 'suspend':
      return suspend(context, waitMs);
    case 'quorum-loss':
      return quorumLoss(context, waitMs);
    case 'cut-holder':
    case 'reset-holder':
      return runLinkFault(fault, context, waitMs);
    case 'delete-waiter-key':
      return deleteWaiterKey(context, waitMs);
  }
}

/** The client ops whose invoke flicker waits for: a lease given back (released, resigned) or extended. */
export const FLICKER_TRIGGERS: ReadonlySet<string> = new Set(['release', 'resign', 'extend']);

/** Ops that grant a lock or leadership: a second one while the holder is stopped is what it is after. */
const GRANTS = new Set(['acquire', 'campaign', 'lock']);
const ms = (ns: number) => Math.round(ns / 1e6);

/**
 * A holder stopped (SIGSTOP) right after its validity check, as a GC pause or a CPU-bound stretch would
 * stop it, for longer than its session: the servers expire it and grant the next waiter. It is resumed
 * once another client has been granted (plus a short margin, so the two overlap if the old holder
 * still believes it holds), or after twice the session and 2 s at most.
 */
async function stallHolder(context: NemesisContext, waitMs: number): Promise<FaultWindowSummary> {
  const { sessionMs } = context;
  const marginMs = Math.min(200, Math.max(50, Math.round(context.ttlMs / 4)));
  const minStallMs = sessionMs + marginMs;
  const maxStallMs = 2 * sessionMs + 2_000;
  let holder: ClientHandle | undefined;
  let stoppedAt = 0;
  const started = await aimedStart(
    context,
    { fault: 'stall-holder', sessionMs },
    // A window opens right after the client checked that its lease is valid: it holds, by its own
    // account. The client is stopped as the window opens, so the start is recorded as it acts.
    () => context.nextWindow(waitMs, context.signal, { pause: true }),
    `no client reached its validity check within ${waitMs} ms`,
    async (client) => {
      holder = client;
      stoppedAt = nowNs();
      const grant = client.grant;
      return {
        client: client.index,
        process: client.process,
        heldForMs: grant ? ms(stoppedAt - grant.grantedAt) : null,
        validLeftMs: grant?.validUntil === undefined ? null : ms(grant.validUntil - stoppedAt),
      };
    },
  );
  if (!started.ok || !holder) {
    return {
      fault: 'stall-holder',
      target: {},
      applied: false,
      error: started.ok ? 'no holder' : started.error,
    };
  }
  const stalled = holder;
  context.progress(`nemesis: stalled holder ${stalled.index} (session ${sessionMs} ms)`);
  // Independent probe (#20): /proc shows the holder stopped during the stall, and running after it.
  const stopped = observeClientStop(stalled.pid, 'started', minStallMs, context.startedAt);
  let other: { event: UnindexedEvent; client: ClientHandle } | undefined;
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
  } finally {
    stalled.resume();
  }
  const evidence = {
    stalledMs: ms(nowNs() - stoppedAt),
    otherClient: other?.client.index ?? null,
    otherGrantedAfterMs: other ? ms(other.event.time - stoppedAt) : null,
    cutShort: context.signal.aborted,
  };
  await nemesisOp(
    context,
    'stop',
    { fault: 'stall-holder', client: stalled.index, ...evidence },
    async () => undefined,
  );
  const observed = {
    started: await stopped,
    healed: await observeClientStop(stalled.pid, 'healed', 2_000, context.startedAt),
  };
  return { fault: 'stall-holder', target: { client: stalled.index }, applied: true, evidence, observed };
}

/**
 * The server a client's release must pass: the leader where there is one (every write goes through
 * it), else one server at random (Redis: the only one; Redlock: one of its masters).
 */
export async function aimedNode(context: NemesisContext, random: () => number): Promise<string> {
  const { deployment } = context;
  const leader = await deployment.leader?.().catch(() => undefined);
  return leader && deployment.nodes.includes(leader) ? leader : pick(random, deployment.nodes);
}

/**
 * A short outage timed on a release or extend: the moment a client invokes one, the leader (or a
 * server) is killed (kill -9) while the request is in flight, and restarted a quarter of a session
 * later, so the session outlives the outage and the failed release must be handled by the client, not
 * by an expiry. The record says how long the outage really was and whether it stayed within the session.
 */
async function flicker(
  context: NemesisContext,
  random: () => number,
  waitMs: number,
): Promise<FaultWindowSummary> {
  const { faults } = context.deployment;
  // A quarter of the session before the restart is asked for: a restart takes its own time (etcd about
  // half a second, a ZooKeeper JVM seconds), and the whole outage should stay within the session.
  const downMs = Math.max(50, Math.round(context.sessionMs / 4));
  const node = await aimedNode(context, random);
  let killedAt = 0;
  // The triggering request's own outcome (evidence only): the client's next event of that op.
  const watching = new AbortController();
  let answer: WatchedAnswer;
  const started = await aimedStart(
    context,
    { fault: 'flicker', node },
    () =>
      context.nextEvent(
        (event) => event.type === 'invoke' && FLICKER_TRIGGERS.has(event.f),
        waitMs,
        context.signal,
      ),
    `no client released or extended within ${waitMs} ms`,
    async (seen) => {
      const { index } = seen.client;
      const f = seen.event.f;
      answer = context.nextEvent(
        (event, client) => client.index === index && event.f === f,
        10 * downMs + 10_000,
        watching.signal,
      );
      killedAt = nowNs();
      await faults.kill(node);
      return {
        client: seen.client.index,
        process: seen.event.process,
        trigger: seen.event.f,
        afterInvokeMs: Math.round((killedAt - seen.event.time) / 1e5) / 10,
      };
    },
  );
  if (!started.ok) {
    watching.abort();
    return { fault: 'flicker', target: { node }, applied: false, error: started.error };
  }
  context.progress(`nemesis: flicker: ${node} killed on a ${started.result.trigger}`);
  // Independent probe (#20): the member is seen down before its restart, and serving after it.
  const { deployment, startedAt } = context;
  const down = observePhase(deployment, 'flicker', { node }, 'started', downMs, startedAt);
  // Held through an abort only as long as it takes to restart: never leave a server down.
  await sleep(downMs - ms(nowNs() - killedAt), context.signal);
  let outageMs = 0;
  await nemesisOp(context, 'stop', { fault: 'flicker', node }, async () => {
    await faults.restart(node);
    outageMs = ms(nowNs() - killedAt);
    return { outageMs, sessionMs: context.sessionMs, withinSession: outageMs < context.sessionMs };
  });
  const metOutage = await requestMetOutage(answer, watching, killedAt);
  const evidence = {
    ...started.result,
    outageMs,
    withinSession: outageMs < context.sessionMs,
    requestMetOutage: metOutage,
  };
  const observed = {
    started: await down,
    healed: await observePhase(deployment, 'flicker', { node }, 'healed', 5_000, startedAt),
  };
  const target = { node, client: started.result.client };
  return { fault: 'flicker', target, applied: true, evidence, observed };
}

/**
 * Every client connection reset (TCP RST through the fault proxy, new ones too) while a client holds,
 * for half the session: each client sees its connection drop at once (ZooKeeper: suspended) and gets
 * it back with its session alive, where a careful client reclaims its lease (Curator's pattern). A
 * reset rather than a silent cut or a SIGSTOP: ZooKeeper clients notice silence only after two thirds
 * of the session, so a shorter silent outage would often pass unseen.
 */
async function suspend(context: NemesisContext, waitMs: number): Promise<FaultWindowSummary> {
  const { faults, nodes } = context.deployment;
  const outageMs = Math.max(50, Math.round(context.sessionMs / 2));
  let suspendedAt = 0;
  let ports = new Set<number>();
  let before: Map<number, Set<string>> | undefined;
  const started = await aimedStart(
    context,
    { fault: 'suspend', nodes: [...nodes] },
    () => context.nextWindow(waitMs, context.signal),
    `no client reached its window within ${waitMs} ms`,
    async (holder) => {
      // The clients' links to the servers as the reset begins: each must be seen cut (one /proc read each).
      if (context.clients) {
        ports = endpointPorts(context.deployment.endpoints);
        before = clientLinks(
          context.clients.map((c) => c.pid),
          ports,
        );
      }
      suspendedAt = nowNs();
      for (const node of nodes) await faults.toxic(node, { type: 'reset_peer' });
      return { client: holder.index, process: holder.process, outageMs, sessionMs: context.sessionMs };
    },
  );
  if (!started.ok) return { fault: 'suspend', target: {}, applied: false, error: started.error };
  context.progress(`nemesis: suspend: client links reset for ${outageMs} ms`);
  // Independent probe (#20): the links open at the reset are gone and a new request through each proxy fails;
  // after the heal, requests through each proxy are answered again.
  const probe = (phase: 'started' | 'healed', timeoutMs: number) =>
    observeLinksReset(
      faults.observe?.bind(faults),
      nodes,
      before,
      ports,
      phase,
      timeoutMs,
      context.startedAt,
    );
  const cut = probe('started', outageMs);
  await sleep(outageMs - ms(nowNs() - suspendedAt), context.signal);
  const evidence = { ...started.result };
  await nemesisOp(context, 'stop', { fault: 'suspend', nodes: [...nodes] }, async () => {
    await faults.heal();
    return { suspendedMs: ms(nowNs() - suspendedAt) };
  });
  const observed = { started: await cut, healed: await probe('healed', 5_000) };
  return { fault: 'suspend', target: { client: started.result.client }, applied: true, evidence, observed };
}
