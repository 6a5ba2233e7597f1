import type { CheckOutcome } from '../check/check.js';
import { nowNs } from '../history/clock.js';
import type { UnindexedEvent } from '../history/event.js';
import { sleep } from '../workloads/util.js';
import { aimedNode } from './aimed.js';
import { type ClientHandle, type FaultWindowSummary, type NemesisContext, nemesisOp } from './context.js';
import { observePhase } from './observation.js';

/** A server hung while the clients close: started before they are told to stop, healed after. */
export interface HangAtClose {
  /** How long the clients may take to close, in all, before the node is resumed anyway. */
  readonly holdMs: number;
  /**
   * Resumes the node once every client has exited or has run its close past its bound (counted from that
   * client's own close invoke), or after `holdMs` in all. Each promise settles on its client's exit; the
   * index in `exits` is the client's.
   */
  healAfter(exits: readonly Promise<unknown>[]): Promise<FaultWindowSummary>;
}

/**
 * How long a client process may take to exit once its close() has settled. Its last steps are a
 * message and a disconnect; anything longer is something close() left open (a socket, a timer).
 */
export const CLOSE_EXIT_GRACE_MS = 2_000;

/** A client whose process outlived its settled close() by more than the grace: what close() left open. */
export interface CloseLeak {
  client: number;
  /** When its close op completed (ms after the node was stopped). */
  closedAfterMs: number;
  /** How long the process lived on after that (null: still running when last looked). */
  exitedAfterCloseMs: number | null;
}

/**
 * `hang-at-close`: the leader (or one server) is stopped (SIGSTOP, its sockets stay open) while the
 * clients still run, a moment before they are told to stop, so requests and subscriptions to it are
 * pending when `close()` is called. It is resumed only once each client has exited or has run its close
 * past the documented bound and the client's own overrun record (client/close.ts), counted from THAT
 * client's close invoke: a client whose last op hung on the node begins close() late, and a hold counted
 * from the stop message let its close pass (R4 F4). A `close()` that waits on the hung server ends only
 * after the heal: the clients' own `close` ops and the bounds check convict it. A client whose close
 * settled but whose process does not exit within a grace left something open (a socket to the hung
 * server): listed as a leak, which makes the run illegal (`withCloseLeaks`).
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
  const perClientMs = closeBoundMs + 3_000;
  // In all: a client's last op may itself hang on the node before its close begins (an op is bounded
  // by the workload's own timeouts, well inside another hold).
  const holdMs = 2 * perClientMs;
  const leadMs = Math.min(context.ttlMs, 500);
  const node = await aimedNode(context, random);
  const started = await nemesisOp(context, 'start', { fault: 'hang-at-close', node, holdMs }, () =>
    faults.pause(node),
  );
  if (!started.ok) return { fault: 'hang-at-close', target: { node }, applied: false, error: started.error };
  const pausedAt = nowNs();
  const msSincePause = (ns: number) => Math.round((ns - pausedAt) / 1e6);
  // Independent probe (#20): the node is seen stopped while the clients close, and running after the heal.
  const { deployment, startedAt } = context;
  const stopped = observePhase(deployment, 'hang-at-close', { node }, 'started', leadMs, startedAt);
  context.progress(`nemesis: hang-at-close: ${node} stopped; clients close in ${leadMs} ms`);
  // The clients keep working against the hung node for a moment: their requests to it now hang.
  await sleep(leadMs, context.signal);
  return {
    holdMs,
    async healAfter(exits) {
      const watching = new AbortController();
      const signal = AbortSignal.any([watching.signal, context.signal]);
      const exitedAt: (number | undefined)[] = exits.map(() => undefined);
      const closedAt: (number | undefined)[] = exits.map(() => undefined);
      const exited = exits.map((exit, i) =>
        exit.then(() => {
          exitedAt[i] = nowNs();
        }),
      );
      const closeOp =
        (i: number, settled: boolean) =>
        (event: UnindexedEvent, client: ClientHandle): boolean =>
          client.index === i &&
          event.f === 'close' &&
          (settled ? event.type === 'ok' || event.type === 'fail' : event.type === 'invoke');
      // Settled (ok or fail): close() returned. `info` is the client's record of a close still pending.
      for (const i of exits.keys()) {
        void context.nextEvent(closeOp(i, true), holdMs, signal).then((seen) => {
          if (seen) closedAt[i] = seen.event.time;
        });
      }
      const released = exits.map(async (_, i) => {
        const invoke = await Promise.race([
          exited[i]!.then(() => undefined),
          context.nextEvent(closeOp(i, false), holdMs, signal),
        ]);
        if (exitedAt[i] !== undefined || !invoke) return;
        const heldForMs = (invoke.event.time - nowNs()) / 1e6 + perClientMs;
        await Promise.race([exited[i], sleep(heldForMs, signal)]);
      });
      await Promise.race([Promise.all(released), sleep(holdMs, signal)]);
      const healedAt = nowNs();
      const closed = exitedAt.filter((t) => t !== undefined).length;
      const evidence = {
        node,
        hungMs: msSincePause(healedAt),
        exitedBeforeHeal: closed,
        clients: exits.length,
        boundReached: closed < exits.length,
      };
      context.progress(
        `nemesis: hang-at-close: ${closed} of ${exits.length} clients exited before ${node} resumed`,
      );
      await nemesisOp(context, 'stop', { fault: 'hang-at-close', ...evidence }, () => faults.resume(node));
      const resumed = observePhase(deployment, 'hang-at-close', { node }, 'healed', 5_000, startedAt);
      // A client whose close settled just now still gets its grace to exit; and whoever is still running
      // gets that long after the heal too, so the evidence says when a leaking process let go (if it did).
      await Promise.race([Promise.all(exited), sleep(CLOSE_EXIT_GRACE_MS, signal)]);
      watching.abort();
      const leaks: CloseLeak[] = [];
      for (const [client, closed] of closedAt.entries()) {
        if (closed === undefined) continue;
        const exit = exitedAt[client];
        const lived = exit === undefined ? undefined : (exit - closed) / 1e6;
        if (lived !== undefined && lived <= CLOSE_EXIT_GRACE_MS) continue;
        leaks.push({
          client,
          closedAfterMs: msSincePause(closed),
          exitedAfterCloseMs: lived === undefined ? null : Math.round(lived),
        });
      }
      if (leaks.length > 0) {
        context.progress(
          `nemesis: hang-at-close: ${leaks.length} client(s) outlived their close() by more than ${CLOSE_EXIT_GRACE_MS} ms`,
        );
      }
      const observed = { started: await stopped, healed: await resumed };
      return {
        fault: 'hang-at-close',
        target: { node },
        applied: true,
        evidence: { ...evidence, leaks },
        observed,
      };
    },
  };
}

/**
 * A run where a client process outlived its settled close() (see `CloseLeak`) is illegal: the
 * documented promise is that close() leaves nothing open, and a process kept alive is the evidence that
 * it did. Adds a `close-leak` entry listing each, as `withFaultEffects` adds its own.
 */
export function withCloseLeaks(outcome: CheckOutcome, faults: readonly FaultWindowSummary[]): CheckOutcome {
  const leaks = faults.flatMap((f) =>
    f.fault === 'hang-at-close' && Array.isArray(f.evidence?.leaks) ? (f.evidence.leaks as CloseLeak[]) : [],
  );
  if (leaks.length === 0) return outcome;
  return {
    ...outcome,
    verdict: 'illegal',
    checkers: {
      ...outcome.checkers,
      'close-leak': {
        verdict: 'illegal',
        violationCount: leaks.length,
        violations: leaks.map((leak) => ({
          ...leak,
          message:
            leak.exitedAfterCloseMs === null
              ? `client ${leak.client}'s process was still running ${CLOSE_EXIT_GRACE_MS} ms after its close() settled`
              : `client ${leak.client}'s process exited ${leak.exitedAfterCloseMs} ms after its close() settled (grace ${CLOSE_EXIT_GRACE_MS} ms)`,
        })),
        stats: { leaks: leaks.length },
      },
    },
  };
}
