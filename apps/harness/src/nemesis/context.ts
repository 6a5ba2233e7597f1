import type { Deployment } from '../backends/types.js';
import { nowNs } from '../history/clock.js';
import { NEMESIS, type UnindexedEvent } from '../history/event.js';
import type { GrantSeen } from '../run/grants.js';
import { sleep } from '../workloads/util.js';
import type { FaultName, FaultTarget } from './faults.js';
import type { FaultObservation } from './observation.js';

/*
 * What a fault sees of the run (the context) and how it records itself (nemesisOp): shared by the
 * schedule (nemesis.ts), the faults aimed at the lease (aimed.ts, hang-at-close.ts) and the scripted
 * scenarios, which import it from here so that none of them imports another.
 */

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
  /** The client's OS process id, for the independent probes of faults on it (/proc); absent in scripted tests. */
  readonly pid?: number | undefined;
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
  /** The prefix of the run's keys on the servers (the clients' namespace); faults that touch keys need it. */
  readonly namespace?: string;
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
  /** Every client of the run, for probes that read their processes (absent in scripted tests). */
  readonly clients?: readonly ClientHandle[];
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
  /** What the independent probes saw of the fault's effect, and when (every fault that was applied). */
  observed?: FaultObservation;
}

/**
 * A fault that did nothing (an aimed fault whose moment never came): its op completes `fail`, so the
 * checkers treat it as never in force. Recorded `info` it would count as in force to the final heal and
 * excuse whatever the clients did meanwhile (a stuck lock nobody released, so nothing to aim at).
 */
export class FaultNotApplied extends Error {
  readonly code = 'not-applied';
  constructor(why: string) {
    super(`not applied: ${why}`);
    this.name = 'FaultNotApplied';
  }
}

/**
 * An aimed fault's start: it waits for its moment (`wait`, bounded) without recording anything, and its
 * start op is recorded only once the moment came, around `act` — the op's invoke is when the fault acts
 * (the SIGSTOP, the kill), so no checker excuses what happened while the nemesis was only watching. A
 * moment that never came is recorded as a start that failed ("not applied: <why>"), at once.
 */
export async function aimedStart<M, T>(
  context: NemesisContext,
  value: Record<string, unknown>,
  wait: () => Promise<M | undefined>,
  why: string,
  act: (moment: M) => Promise<T>,
): Promise<{ ok: true; result: T } | { ok: false; error: string }> {
  const moment = await wait();
  if (moment === undefined) {
    return nemesisOp(context, 'start', value, async () => {
      throw new FaultNotApplied(context.signal.aborted ? 'the fault phase ended first' : why);
    });
  }
  return nemesisOp(context, 'start', value, () => act(moment));
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
    // Refused with nothing done (a fault the servers cannot take, a server not running, an aimed fault
    // whose moment never came): a fail, not an unknown.
    const code = (error as { code?: unknown }).code;
    const unsupported = code === 'unsupported-fault' || code === 'not-running' || code === 'not-applied';
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
