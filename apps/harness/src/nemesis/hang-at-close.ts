import { nowNs } from '../history/clock.js';
import { sleep } from '../workloads/util.js';
import { aimedNode } from './aimed.js';
import { type FaultWindowSummary, type NemesisContext, nemesisOp } from './context.js';

/** A server hung while the clients close: started before they are told to stop, healed after. */
export interface HangAtClose {
  /** How long the clients may take to close before the node is resumed anyway. */
  readonly holdMs: number;
  /** Resumes the node once every client has exited (each promise settles on its exit) or `holdMs` passed. */
  healAfter(exits: readonly Promise<unknown>[]): Promise<FaultWindowSummary>;
}

/**
 * `hang-at-close`: the leader (or one server) is stopped (SIGSTOP, its sockets stay open) while the
 * clients still run, a moment before they are told to stop, so requests and subscriptions to it are
 * pending when `close()` is called; it is resumed only once every client has exited or after
 * `holdMs`, which is past the close bound the clients document. A `close()` that waits on the hung
 * server ends only after the heal: the clients' own `close` ops and the bounds check convict it. A
 * client whose close returned but whose process does not exit until the heal left something open (a
 * socket to the hung server): the stop op counts the processes that exited before the heal.
 *
 * `context.signal` must be the run's own (Ctrl-C), not the fault phase's, which has ended by now.
 */
export async function hangAtClose(
  context: NemesisContext,
  random: () => number,
  closeBoundMs: number,
): Promise<HangAtClose | FaultWindowSummary> {
  const { faults } = context.deployment;
  // Past the bound, the client records its close as still pending (client/close.ts: 2 s later), so the
  // history convicts it before the heal lets it finish; a second more for a loaded machine.
  const holdMs = closeBoundMs + 3_000;
  const leadMs = Math.min(context.ttlMs, 500);
  const node = await aimedNode(context, random);
  const started = await nemesisOp(context, 'start', { fault: 'hang-at-close', node, holdMs }, () =>
    faults.pause(node),
  );
  if (!started.ok) return { fault: 'hang-at-close', target: { node }, applied: false, error: started.error };
  const pausedAt = nowNs();
  context.progress(`nemesis: hang-at-close: ${node} stopped; clients close in ${leadMs} ms`);
  // The clients keep working against the hung node for a moment: their requests to it now hang.
  await sleep(leadMs, context.signal);
  return {
    holdMs,
    async healAfter(exits) {
      let closed = 0;
      const counted = exits.map((exit) => exit.then(() => closed++));
      const bound = new AbortController();
      const allClosed = Promise.all(counted).then(() => bound.abort());
      await sleep(holdMs, AbortSignal.any([bound.signal, context.signal]));
      bound.abort();
      void allClosed;
      const evidence = {
        node,
        hungMs: Math.round((nowNs() - pausedAt) / 1e6),
        exitedBeforeHeal: closed,
        clients: exits.length,
        boundReached: closed < exits.length,
      };
      context.progress(
        `nemesis: hang-at-close: ${closed} of ${exits.length} clients exited before ${node} resumed`,
      );
      await nemesisOp(context, 'stop', { fault: 'hang-at-close', ...evidence }, () => faults.resume(node));
      return { fault: 'hang-at-close', target: { node }, applied: true, evidence };
    },
  };
}
