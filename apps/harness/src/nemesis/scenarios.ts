import { nowNs } from '../history/clock.js';
import { sleep } from '../workloads/util.js';
import {
  type ClientHandle,
  type FaultWindowSummary,
  type NemesisContext,
  nemesisOp,
  pauseClient,
  until,
} from './nemesis.js';
import { type ObservedPhase, observePhase } from './observation.js';

/**
 * Kleppmann's two diagrams as scripts that reproduce them on purpose, not by luck.
 *
 * `gc-pause`: a client is frozen between its lock check and its write, for twice the TTL. Its lease
 * expires on the server, another client acquires and writes, then the frozen one wakes and writes
 * with its old lease: a lost update unless the resource refuses its stale fence. Repeated every few
 * TTLs through the fault phase.
 *
 * `clock-jump` (Redlock on 5 nodes), scripted step by step on observed events (see `clockJumpOnce`): a
 * holder is granted n1–n3 while n4, n5 are unreachable, and is stopped between its check and its write;
 * n3's clock jumps past the TTL and the network turns (n1, n2 unreachable, n4, n5 back); a second client
 * is granted n3–n5 while the holder's grant is young; the holder resumes and writes. Every pass that
 * gets its two grants convicts.
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
  const { nodes } = context.deployment;
  if (nodes.length < 5) throw new Error(`the clock-jump scenario needs 5 Redlock nodes, got ${nodes.length}`);
  const applied: FaultWindowSummary[] = [];
  let at = Math.min(context.ttlMs, recoveryAtMs / 4);
  // A pass takes about a TTL once its holder is granted; one that overruns is cut short by the fault
  // phase's end (waits end on abort, the holder is resumed and everything healed).
  while (at + context.ttlMs < recoveryAtMs) {
    if (!(await until(context, at))) break;
    const probe: { skew?: Promise<ObservedPhase> } = {};
    const once = await clockJumpOnce(context, nodes as [string, string, string, string, string], probe);
    // Independent probe (#20): c's own clock read ahead while the pass ran, and back on ours after its heal.
    if (once.applied && probe.skew) {
      const { deployment, startedAt } = context;
      const healed = await observePhase(deployment, 'clock-jump', once.target, 'healed', 5_000, startedAt);
      once.observed = { started: await probe.skew, healed };
    }
    applied.push(once);
    if (!once.applied && once.error?.startsWith('fault')) break;
    at = performance.now() - context.startedAt + context.ttlMs / 2;
  }
  return applied;
}

/**
 * One pass of the diagram, each step waiting for what the previous one must have caused (a grant seen
 * in the history, a client in its window), each wait bounded:
 *
 * 1. clients' connections to d and e are reset (and every new one): requests to them fail at once and
 *    are lost. (Freezing d and e instead, as this script once did, only delays the requests: on thaw
 *    d and e granted them to the holder too, and the second client found them taken.)
 * 2. the first client to reach its window with a grant asked for half a TTL after step 1 is the holder:
 *    granted on a, b, c only. It is stopped (SIGSTOP) there, between its check and its write.
 * 3. the network turns (d, e healed; a, b reset) and c's clock jumps 3 TTLs ahead: c forgets the lock.
 * 4. another client, granted after the turn (on c, d, e), reaches its window: it has read the stock.
 * 5. the holder resumes and writes what it read: two holders, one of the two purchases lost.
 */
async function clockJumpOnce(
  context: NemesisContext,
  [a, b, c, d, e]: [string, string, string, string, string],
  probe: { skew?: Promise<ObservedPhase> },
): Promise<FaultWindowSummary> {
  const { faults } = context.deployment;
  // Long enough for stale grants to expire, a client to finish its section, reconnect and poll its way
  // to a grant.
  const stepMs = Math.max(3_000, context.ttlMs * 4);
  const cut = await nemesisOp(context, 'start', { fault: 'reset-clients', nodes: [d, e] }, async () => {
    await faults.toxic(d, { type: 'reset_peer' });
    await faults.toxic(e, { type: 'reset_peer' });
  });
  if (!cut.ok) return { fault: 'clock-jump', target: {}, applied: false, error: `fault: ${cut.error}` };
  // A grant d and e took before the cut stays there until its TTL runs out (its release cannot reach
  // them), and would keep the second client from its quorum. So the holder is a client that asked for
  // its grant half a TTL after the cut: every key on d and e is gone half a TTL into its grant, and
  // the second client still has half a TTL of the holder's validity to be granted in.
  const holderAfter = nowNs() + (context.ttlMs / 2) * 1e6;
  // Stopped at once, before its window's acknowledgement: it cannot write until resumed.
  const holder = await windowOf(
    context,
    (client) => (client.grant?.askedAt ?? 0) > holderAfter,
    stepMs,
    true,
  );
  let evidence: Record<string, unknown> = {};
  let error: string | undefined;
  // The fault in force, closed by a `stop` op of the same name so the report shades each one right.
  let open: Record<string, unknown> = { fault: 'reset-clients', nodes: [d, e] };
  try {
    if (!holder) {
      error = `no client was granted ${a}, ${b}, ${c} within ${stepMs} ms`;
      return { fault: 'clock-jump', target: { node: c }, applied: false, error };
    }
    const offsetMs = context.ttlMs * 3;
    await nemesisOp(context, 'stop', open, () => faults.heal());
    open = { fault: 'clock-jump', node: c, unreachable: [a, b] };
    const turned = await nemesisOp(
      context,
      'start',
      { ...open, offsetMs, holder: holder.index },
      async () => {
        await faults.toxic(a, { type: 'reset_peer' });
        await faults.toxic(b, { type: 'reset_peer' });
        await faults.clock(c, { offsetMs });
      },
    );
    if (!turned.ok) {
      error = `fault: ${turned.error}`;
      return { fault: 'clock-jump', target: { node: c, client: holder.index }, applied: false, error };
    }
    const turnAt = nowNs();
    probe.skew = observePhase(
      context.deployment,
      'clock-jump',
      { node: c },
      'started',
      stepMs,
      context.startedAt,
    );
    const second = await windowOf(
      context,
      (client) => client.index !== holder.index && (client.grant?.askedAt ?? 0) > turnAt,
      stepMs,
      false,
    );
    if (!second) {
      error = `no other client was granted ${c}, ${d}, ${e} within ${stepMs} ms`;
      return { fault: 'clock-jump', target: { node: c, client: holder.index }, applied: false, error };
    }
    // Both grants are on one clock (the host's monotonic one). The holder's grant was still valid, by
    // its own reckoning, when the second client knew it held the lock too: the clock jump did it.
    const first = holder.grant!;
    const other = second.grant!;
    const gapMs = Math.round((other.grantedAt - first.grantedAt) / 1e6);
    const holderValidLeftMs =
      first.validUntil === undefined ? null : Math.round((first.validUntil - other.grantedAt) / 1e6);
    evidence = {
      second: second.index,
      secondGrantAfterMs: gapMs,
      holderValidLeftMs,
      holderGrantValid: holderValidLeftMs !== null && holderValidLeftMs > 0,
    };
    context.progress(
      `nemesis: clock jump on ${c}: client ${second.index} granted ${gapMs} ms after holder ${holder.index} (holder valid ${holderValidLeftMs} ms more)`,
    );
    return { fault: 'clock-jump', target: { node: c, client: holder.index }, applied: true, evidence };
  } finally {
    // Never leave a client frozen, even when the run is aborted. The holder now writes what it read.
    holder?.resume();
    if (holder) await sleep(Math.min(context.ttlMs / 2, 250));
    await nemesisOp(context, 'stop', { ...open, ...evidence, ...(error ? { error } : {}) }, () =>
      faults.heal(),
    );
  }
}

/** The next client to open its window that `accept` takes, stopped there at once; undefined after `timeoutMs`. */
function windowOf(
  context: NemesisContext,
  accept: (client: ClientHandle) => boolean,
  timeoutMs: number,
  pause: boolean,
): Promise<ClientHandle | undefined> {
  return context.nextWindow(timeoutMs, context.signal, { accept, pause });
}
