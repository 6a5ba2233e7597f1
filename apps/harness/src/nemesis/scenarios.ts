import { sleep } from '../workloads/util.js';
import { type FaultWindowSummary, type NemesisContext, nemesisOp, pauseClient, until } from './nemesis.js';

/**
 * Kleppmann's two diagrams as scripts that reproduce them on purpose, not by luck.
 *
 * `gc-pause`: a client is frozen between its lock check and its write, for twice the TTL. Its lease
 * expires on the server, another client acquires and writes, then the frozen one wakes and writes
 * with its old lease: a lost update unless the resource refuses its stale fence. Repeated every few
 * TTLs through the fault phase.
 *
 * `clock-jump` (Redlock on 5 nodes): n4 and n5 are frozen (unreachable) while a client takes the lock on n1–n3
 * (a majority); the moment the holder is inside its critical section, n3's clock jumps forward past
 * the TTL (its copy of the lock expires), and the freeze turns around: n1, n2 frozen, n4, n5 thawed.
 * A second client now gets n3, n4, n5 — also a majority — while the first still holds a young, valid
 * grant on n1, n2. The holder is kept in its section (SIGSTOP) for half a TTL, inside its validity, so
 * the second client wins its quorum while the first still holds: every repetition convicts.
 */
export const SCENARIOS = {
  'gc-pause': 'client paused past its TTL between check and write (single Redis diagram)',
  'clock-jump': 'forward clock jump on one Redlock node while the holder’s grant is young',
} as const;

export type ScenarioName = keyof typeof SCENARIOS;
export const SCENARIO_NAMES = Object.keys(SCENARIOS) as ScenarioName[];

export async function runScenario(
  name: ScenarioName,
  context: NemesisContext,
  recoveryAtMs: number,
): Promise<FaultWindowSummary[]> {
  return name === 'gc-pause' ? gcPause(context, recoveryAtMs) : clockJump(context, recoveryAtMs);
}

async function gcPause(context: NemesisContext, recoveryAtMs: number): Promise<FaultWindowSummary[]> {
  const pauseMs = context.ttlMs * 2;
  const applied: FaultWindowSummary[] = [];
  let at = Math.min(context.ttlMs, recoveryAtMs / 4);
  while (at + pauseMs < recoveryAtMs) {
    if (!(await until(context, at))) break;
    // Wait for a window as long as the fault phase allows: on a loaded machine clients can be slow to get
    // their first grant, and a scenario that never fires proves nothing.
    const waitMs = Math.max(context.ttlMs, recoveryAtMs - pauseMs - (performance.now() - context.startedAt));
    applied.push(await pauseClient(context, pauseMs, waitMs));
    at = performance.now() - context.startedAt + context.ttlMs;
  }
  return applied;
}

async function clockJump(context: NemesisContext, recoveryAtMs: number): Promise<FaultWindowSummary[]> {
  const { faults, nodes } = context.deployment;
  if (nodes.length < 5) throw new Error(`the clock-jump scenario needs 5 Redlock nodes, got ${nodes.length}`);
  const [a, b, c, d, e] = nodes as [string, string, string, string, string];
  const applied: FaultWindowSummary[] = [];
  let at = Math.min(context.ttlMs, recoveryAtMs / 4);
  while (at + context.ttlMs * 2 < recoveryAtMs) {
    if (!(await until(context, at))) break;
    // 1. Only a, b, c answer clients: the next grant is on a majority that includes c. d and e are
    // "unreachable" by being frozen (SIGSTOP): requests to them time out, but their connections stay up,
    // so when they are thawed they answer at once (a network cut would leave clients reconnecting).
    const cut = await nemesisOp(context, 'start', { fault: 'pause-server', nodes: [d, e] }, async () => {
      await faults.pause(d);
      await faults.pause(e);
    });
    if (!cut.ok) {
      applied.push({ fault: 'clock-jump', target: {}, applied: false, error: cut.error });
      break;
    }
    // 2. A holder is inside its critical section with a young grant. It is kept there for half a TTL
    // (SIGSTOP), well inside its validity, standing in for work that simply takes a while: the second
    // holder then wins its quorum during that time for sure, instead of only when it happens to beat
    // a window of a few milliseconds. The grant is valid on the holder's own clock throughout, so
    // the violation comes from the clock jump, not from an expired lease.
    const holder = await context.nextWindow(context.ttlMs * 3, context.signal);
    const holdMs = Math.round(context.ttlMs / 2);
    holder?.pause();
    try {
      // 3. c's clock jumps past the TTL; the network turns: only c, d, e answer clients.
      const jumped = await nemesisOp(
        context,
        'start',
        { fault: 'clock-jump', node: c, holder: holder?.index, holderKeptMs: holdMs },
        async () => {
          await faults.clock(c, { offsetMs: context.ttlMs * 3 });
          await faults.pause(a);
          await faults.pause(b);
          await faults.resume(d);
          await faults.resume(e);
        },
      );
      applied.push({
        fault: 'clock-jump',
        target: { node: c, ...(holder ? { client: holder.index } : {}) },
        applied: jumped.ok && holder !== undefined,
        ...(jumped.ok ? {} : { error: jumped.error }),
      });
      context.progress(`nemesis: clock jump on ${c} while client ${holder?.index ?? '?'} holds`);
      await sleep(holdMs, context.signal);
    } finally {
      // Never leave a client frozen, even when the run is aborted.
      holder?.resume();
    }
    await until(context, performance.now() - context.startedAt + context.ttlMs - holdMs);
    await nemesisOp(context, 'stop', { fault: 'clock-jump', node: c }, () => faults.heal());
    at = performance.now() - context.startedAt + context.ttlMs / 2;
  }
  return applied;
}
