import { nowNs } from '../history/clock.js';
import { sleep } from '../workloads/util.js';
import { aimedStart, type FaultWindowSummary, type NemesisContext, nemesisOp } from './context.js';
import { observePhase } from './observation.js';
import { requestMetOutage, type WatchedAnswer } from './outage-answer.js';

/** The client ops whose invoke the quorum loss waits for: a lease or leadership given back. */
const TRIGGERS: ReadonlySet<string> = new Set(['release', 'resign']);

const ms = (ns: number) => Math.round(ns / 1e6);

/**
 * How long every server stays down: until each client has given its session up for a new one, while the
 * servers, with no leader to expire anything, still keep the old one. A client learns of the outage at
 * once only if its own server was killed; one connected to the survivor (which stops answering but may
 * keep the socket) suspends when its requests go unanswered past the vouched span (up to ⅔ of the
 * session), then gives the session up after one session timeout suspended, checked every probe tick
 * (up to ⅙ of a session): ⁵⁄₆ + 1 sessions after the kill in all. Back sooner, such a client resumes its
 * old session and deletes what it gave up through it, so the quorum loss tests nothing: at 1.25 sessions
 * + 0.5 s (10.5 s at session 8 s), the servers served again 11.7 s and 12.8 s after the kill in two runs
 * of 2026-12-03, the first grants came at once, and their zxids (5 transactions into the new epoch, no
 * session created or expired) show every client had kept its session. Two sessions + 0.5 s leaves a
 * margin for a loaded machine's late timers.
 */
export function quorumLossDownMs(sessionMs: number): number {
  return 2 * sessionMs + 500;
}

/** The longest a client may take to give its session up after the kill (see `quorumLossDownMs`). */
export function quorumLossGiveUpMs(sessionMs: number): number {
  return Math.ceil((sessionMs * 11) / 6);
}

/**
 * The quorum lost around a release: the moment a client invokes a release or resign, a majority of the
 * servers is killed (kill -9; the one left stops serving), kept down past the session
 * (`quorumLossDownMs`), then restarted one at a time. The
 * release cannot be confirmed, and the node or key it was to delete outlives the outage on the servers
 * (no leader, no expiry; a new leader counts every session's timeout from its own start), while its
 * client has already moved on to a new session: unless the client withdraws what it gave up once the
 * servers answer again, every waiter waits out another session for a lock nobody holds. The record says
 * whether the release met the outage and whether the outage outlasted the session and every client's give-up
 * (the aim, aim.ts).
 */
export async function quorumLoss(context: NemesisContext, waitMs: number): Promise<FaultWindowSummary> {
  const { deployment, sessionMs, startedAt } = context;
  const { faults } = deployment;
  // A majority: the quorum is gone, and restarting the killed one at a time brings it back with the first
  // (each restart waits until its server serves, which a lone member of a quorum system never does; all
  // three ZooKeeper JVMs restarted at once did not form a quorum within 60 s at load 30).
  const nodes = deployment.nodes.slice(0, Math.floor(deployment.nodes.length / 2) + 1);
  const downMs = quorumLossDownMs(sessionMs);
  let killedAt = 0;
  // The triggering request's own outcome (evidence only): the client's next event of that op.
  const watching = new AbortController();
  let answer: WatchedAnswer;
  const started = await aimedStart(
    context,
    { fault: 'quorum-loss', nodes },
    () =>
      context.nextEvent((event) => event.type === 'invoke' && TRIGGERS.has(event.f), waitMs, context.signal),
    `no client released or resigned within ${waitMs} ms`,
    async (seen) => {
      const { index } = seen.client;
      const f = seen.event.f;
      answer = context.nextEvent(
        (event, client) => client.index === index && event.f === f,
        downMs + 60_000,
        watching.signal,
      );
      killedAt = nowNs();
      await Promise.all(nodes.map((node) => faults.kill(node)));
      return {
        client: index,
        process: seen.event.process,
        trigger: f,
        afterInvokeMs: Math.round((nowNs() - seen.event.time) / 1e5) / 10,
      };
    },
  );
  if (!started.ok) {
    watching.abort();
    return { fault: 'quorum-loss', target: { nodes }, applied: false, error: started.error };
  }
  context.progress(`nemesis: quorum-loss: ${nodes.join(', ')} killed on a ${started.result.trigger}`);
  // Independent probe (#20): each member seen down before the restart, and serving after it.
  const target = { node: nodes[0], nodes };
  const down = observePhase(deployment, 'quorum-loss', target, 'started', downMs, startedAt);
  // Held through an abort only as long as it takes to restart: never leave the servers down.
  await sleep(downMs - ms(nowNs() - killedAt), context.signal);
  let outageMs = 0;
  await nemesisOp(context, 'stop', { fault: 'quorum-loss', nodes }, async () => {
    for (const node of nodes) await faults.restart(node);
    outageMs = ms(nowNs() - killedAt);
    return {
      outageMs,
      sessionMs,
      beyondSession: outageMs > sessionMs,
      beyondGiveUp: outageMs > quorumLossGiveUpMs(sessionMs),
    };
  });
  const metOutage = await requestMetOutage(answer, watching, killedAt);
  const evidence = {
    ...started.result,
    outageMs,
    sessionMs,
    beyondSession: outageMs > sessionMs,
    beyondGiveUp: outageMs > quorumLossGiveUpMs(sessionMs),
    requestMetOutage: metOutage,
  };
  const observed = {
    started: await down,
    healed: await observePhase(deployment, 'quorum-loss', target, 'healed', 10_000, startedAt),
  };
  return {
    fault: 'quorum-loss',
    target: { ...target, client: started.result.client },
    applied: true,
    evidence,
    observed,
  };
}
