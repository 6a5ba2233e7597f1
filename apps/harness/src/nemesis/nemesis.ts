import type { Deployment } from '../backends/types.js';
import { nowNs } from '../history/clock.js';
import { NEMESIS, type UnindexedEvent } from '../history/event.js';
import type { GrantSeen } from '../run/grants.js';
import { sleep } from '../workloads/util.js';
import { runAimedFault } from './aimed.js';
import { CLOSING_FAULT, type FaultName, type FaultTarget, isAimedFault, startServerFault } from './faults.js';
import { seededRandom } from './random.js';
import type { ScheduledFault } from './schedule.js';

/** A client process as the nemesis sees it. */
export interface ClientHandle {
  readonly index: number;
  /** The process id its current ops are recorded under. */
  readonly process: number;
  /**
   * The grant the client holds now (its latest successful acquire). A scenario uses it to tell a grant
   * taken under its faults from an older one.
   */
  readonly grant: GrantSeen | undefined;
  pause(): void;
  resume(): void;
}

export interface WindowWait {
  accept?: (client: ClientHandle) => boolean;
  pause?: boolean;
}

export interface NemesisContext {
  readonly deployment: Deployment;
  readonly ttlMs: number;
  /**
   * How long the servers keep a silent client's lease: ZooKeeper's session timeout, etcd's lease TTL
   * as granted, the TTL elsewhere (`BackendFactory.sessionMs`). Faults aimed at the lease size by it.
   */
  readonly sessionMs: number;
  readonly seed: number;
  /**
   * The next client to open its vulnerable window (between check and write) that `accept` takes (any,
   * without it), or undefined after `timeoutMs`. With `pause`, the client is stopped in the message
   * handler itself, before anything else runs on this side; a client that waits for its window's
   * acknowledgement (`windowAck`) is then provably stopped before its write.
   */
  nextWindow(timeoutMs: number, signal: AbortSignal, options?: WindowWait): Promise<ClientHandle | undefined>;
  /** The next client event `accept` takes as it arrives (see EventWatch), or undefined after `timeoutMs`. */
  nextEvent(
    accept: (event: UnindexedEvent, client: ClientHandle) => boolean,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ event: UnindexedEvent; client: ClientHandle } | undefined>;
  record(event: UnindexedEvent): void;
  progress(message: string): void;
  /** Aborted on Ctrl-C or at the end of the fault phase. */
  readonly signal: AbortSignal;
  /** Start of the run, on `performance.now()`. */
  readonly startedAt: number;
  /** Faults started so far, for progress lines. */
  applied: number;
}

export interface FaultWindowSummary {
  fault: FaultName | string;
  target: FaultTarget;
  applied: boolean;
  error?: string;
  /** What a scripted scenario observed (who was granted when), for the report. */
  evidence?: Record<string, unknown>;
}

/** Records one nemesis op: invoke, then ok (or fail/info with the error), as Jepsen's nemesis does. */
export async function nemesisOp<T>(
  context: NemesisContext,
  f: 'start' | 'stop',
  value: Record<string, unknown>,
  body: () => Promise<T>,
): Promise<{ ok: true; result: T } | { ok: false; error: string }> {
  context.record({ time: nowNs(), process: NEMESIS, type: 'invoke', f, value });
  try {
    const result = await body();
    if (f === 'start') context.applied++;
    const extra = typeof result === 'object' && result !== null ? (result as Record<string, unknown>) : {};
    context.record({ time: nowNs(), process: NEMESIS, type: 'ok', f, value: { ...value, ...extra } });
    return { ok: true, result };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unsupported = (error as { code?: unknown }).code === 'unsupported-fault';
    const type = unsupported ? 'fail' : 'info';
    context.record({ time: nowNs(), process: NEMESIS, type, f, value, error: message });
    return { ok: false, error: message };
  }
}

/** Waits until `atMs` after the run started; false if the run was aborted first. */
export async function until(context: NemesisContext, atMs: number): Promise<boolean> {
  await sleep(context.startedAt + atMs - performance.now(), context.signal);
  return !context.signal.aborted;
}

/** Pauses the next client to open its window, for `durationMs`, as one start/stop pair. */
export async function pauseClient(
  context: NemesisContext,
  durationMs: number,
  waitMs: number,
): Promise<FaultWindowSummary> {
  let client: ClientHandle | undefined;
  const started = await nemesisOp(context, 'start', { fault: 'pause-client' }, async () => {
    client = await context.nextWindow(waitMs, context.signal, { pause: true });
    if (!client) throw new Error('no client reached its window in time');
    return { client: client.index, process: client.process };
  });
  if (!started.ok) return { fault: 'pause-client', target: {}, applied: false, error: started.error };
  if (!client) return { fault: 'pause-client', target: {}, applied: false };
  const paused = client;
  context.progress(`nemesis: paused client ${paused.index} for ${durationMs} ms`);
  // Held even through an abort, so the client is never left frozen: the stop below always runs.
  await sleep(durationMs, context.signal);
  await nemesisOp(context, 'stop', { fault: 'pause-client', client: paused.index }, async () =>
    paused.resume(),
  );
  return { fault: 'pause-client', target: { client: paused.index }, applied: true };
}

/** Runs a seeded schedule to its end (or until aborted); every started fault is healed. */
export async function runSchedule(
  context: NemesisContext,
  schedule: readonly ScheduledFault[],
): Promise<FaultWindowSummary[]> {
  const random = seededRandom(context.seed ^ 0x5eed);
  const applied: FaultWindowSummary[] = [];
  for (const item of schedule) {
    if (!(await until(context, item.atMs))) break;
    if (item.fault === 'pause-client') {
      applied.push(await pauseClient(context, item.durationMs, item.durationMs));
      continue;
    }
    if (isAimedFault(item.fault)) {
      // The fault is sized by the session; the schedule only says how long to wait for its moment.
      applied.push(await runAimedFault(item.fault, context, random, item.waitMs ?? item.durationMs));
      continue;
    }
    if (item.fault === CLOSING_FAULT) continue;
    const fault = item.fault;
    let heal: (() => Promise<void>) | undefined;
    const started = await nemesisOp(context, 'start', { fault }, async () => {
      const s = await startServerFault(fault, context.deployment, random, context.ttlMs);
      heal = s.heal;
      return s.target;
    });
    if (!started.ok) {
      applied.push({ fault, target: {}, applied: false, error: started.error });
      context.progress(`nemesis: ${fault} not applied: ${started.error}`);
      continue;
    }
    context.progress(`nemesis: ${fault} on ${JSON.stringify(started.result)}`);
    applied.push({ fault, target: started.result, applied: true });
    await sleep(item.durationMs, context.signal);
    await nemesisOp(context, 'stop', { fault, ...started.result }, async () => heal?.());
  }
  return applied;
}

/** The final heal before the recovery phase: undo everything, whatever the schedule did. */
export async function healAll(context: NemesisContext): Promise<void> {
  await nemesisOp(context, 'stop', { fault: 'all' }, () => context.deployment.faults.heal());
}
