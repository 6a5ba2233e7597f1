import { sleep } from '@fencekit/core';
import type { ProbeTarget } from '../leader.js';
import type { LocalRecipe } from '../local/recipe.js';
import type { ClusterNode } from '../types.js';

/** The faults whose effect an independent probe can see. */
export type ObservableFault = 'kill' | 'pause' | 'partition' | 'cutClients' | 'latency' | 'clock';

export interface EffectQuery {
  readonly fault: ObservableFault;
  /**
   * The node the fault acted on; for `partition`, optionally a member on the minority side (the isolated one),
   * whose quorum requests the probe also tries.
   */
  readonly node?: string;
  /** `started`: wait until the fault's effect shows; `healed`: until it is gone. */
  readonly phase: 'started' | 'healed';
  /** Bound on the wait (default 5 s); the probe gives up with `seen: false`. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /**
   * The end of the phase (for `started`: the heal begins): a look that finishes after it does not count, and the
   * probe returns `seen: false` with what it last read before it. Unlike `signal`, it does not throw.
   */
  readonly cutOff?: AbortSignal;
}

export interface Observation {
  /** The state the phase asks for (effect present after a start, gone after a heal) was seen within the bound. */
  readonly seen: boolean;
  /** What the last probe read, in words (process state, answer times, leader views, clock readings). */
  readonly detail: string;
  /** From the call to the probe that saw it, or to giving up. */
  readonly afterMs: number;
}

/** One probe's reading: is the fault's effect there, and what was read. */
export interface Look {
  readonly effect: boolean;
  readonly detail: string;
}

/** What the nemesis asked for, which the probes compare the servers' behaviour with. */
export interface RequestedFaults {
  latencyMs(id: string): number | undefined;
  clock(id: string): { offsetMs: number; rate: number; before?: ClockReading } | undefined;
  /** The lead a clock had over real time when its skew was last healed (Date.now()), if it was skewed. */
  clockHealed?(id: string): { leadMs: number; healedAtMs: number } | undefined;
}

export interface ClockReading {
  /** Our wall clock (Date.now()) when the server's clock read `serverMs`. */
  readonly realMs: number;
  readonly serverMs: number;
}

/** Where the probes reach a node: its own port (never through the proxy), the proxy, and its process state. */
export interface EffectSources<N extends ClusterNode> {
  readonly recipe: LocalRecipe;
  readonly members: readonly N[];
  node(id: string): N;
  probeTarget(node: N): ProbeTarget;
  /** The process state letter from /proc (R, S, D, T, Z…), or undefined when there is no such process. */
  processState(node: N): Promise<string | undefined>;
}

/** How long a request on the clients' path may take before it counts as unanswered: a third of the probe's bound. */
const answerBoundMs = (timeoutMs: number) => Math.min(1000, Math.max(200, Math.round(timeoutMs / 3)));
const CLOCK_WINDOW_MS = 400;
/** Drifts closer to real speed than this are measured apart (`slightlyDrifted`). */
const SMALL_DRIFT = 0.1;
/** Faster than this (or not forward) a clock read twice has stepped in between: no rate was measured. */
const MAX_PLAUSIBLE_RATE = 20;

/**
 * Independent probes of each fault's effect, read from the servers themselves (/proc process state, requests on
 * the clients' path, each member's view of the leader, the server's own clock), never from the fault's own
 * bookkeeping: "applied" only means a call returned; these say whether anything happened, and when it stopped.
 */
export class EffectProbes<N extends ClusterNode> {
  constructor(
    private readonly sources: EffectSources<N>,
    private readonly requested: RequestedFaults,
  ) {}

  /** Probes every 100 ms until the phase's state is seen or `timeoutMs` passes. */
  async observe(query: EffectQuery): Promise<Observation> {
    const started = performance.now();
    const timeoutMs = (query.timeoutMs ?? 5_000) + this.outlastingLeadMs(query);
    const wanted = query.phase === 'started';
    let last: Look = { effect: !wanted, detail: 'not probed' };
    const cutOff = (afterMs: number) => ({
      seen: false,
      detail: `cut off by the phase's end; ${last.detail}`,
      afterMs,
    });
    for (;;) {
      query.signal?.throwIfAborted();
      if (query.cutOff?.aborted) return cutOff(Math.round(performance.now() - started));
      const look = await this.look(query, answerBoundMs(timeoutMs)).catch((error: Error) => ({
        effect: !wanted,
        detail: `probe failed: ${error.message}`,
      }));
      const afterMs = Math.round(performance.now() - started);
      // Read (in part) after the phase ended: its readings belong to the next phase, not this one (#20).
      if (query.cutOff?.aborted) return cutOff(afterMs);
      last = look;
      if (last.effect === wanted) return { seen: true, detail: last.detail, afterMs };
      if (afterMs >= timeoutMs) return { seen: false, detail: last.detail, afterMs };
      await sleep(Math.min(100, timeoutMs - afterMs), query.signal);
    }
  }

  /**
   * A healed clock's effect lasts until what the server granted under its lead has run out (see the clock look):
   * the heal probe waits that long on top of its own bound, or it would give up while the effect is still known
   * to last (CI saw Redlock's scripted clock jump end "not healed" with 576 ms of a 6 s lead left).
   */
  private outlastingLeadMs(query: EffectQuery): number {
    if (query.fault !== 'clock' || query.phase !== 'healed' || query.node === undefined) return 0;
    const healed = this.requested.clockHealed?.(query.node);
    return healed ? Math.max(0, healed.healedAtMs + healed.leadMs - Date.now()) : 0;
  }

  private look(query: EffectQuery, answerMs: number): Promise<Look> {
    if (query.fault === 'partition') return this.partitioned(query.node, answerMs, query.phase);
    const node = this.sources.node(String(query.node));
    switch (query.fault) {
      case 'kill':
        return this.gone(node, query.phase);
      case 'pause':
        return this.stopped(node);
      case 'cutClients':
        return this.clientsCut(node, answerMs, query.phase);
      case 'latency':
        return this.slowed(node, answerMs, query.phase);
      case 'clock':
        return this.skewed(node, query.phase);
    }
  }

  /**
   * Killed: no live process (a stopped or slow one is alive: not killed), and nothing serves its port. Healed
   * (restarted): a live process that serves.
   */
  private async gone(node: N, phase: EffectQuery['phase']): Promise<Look> {
    const state = await this.sources.processState(node);
    const serves = await this.sources.recipe.ready(this.sources.probeTarget(node)).then(
      (ok) => ok !== false,
      () => false,
    );
    const dead = state === undefined || state === 'Z';
    const detail = `process ${dead ? (state ? 'a zombie' : 'gone') : `state ${state}`}, ${serves ? 'serves' : 'does not serve'}`;
    return { effect: phase === 'started' ? dead && !serves : dead || !serves, detail };
  }

  /** Paused: the process is stopped (state T). */
  private async stopped(node: N): Promise<Look> {
    const state = await this.sources.processState(node);
    return {
      effect: state === 'T' || state === 't',
      detail: `process ${state === undefined ? 'gone' : `state ${state}`}`,
    };
  }

  /** A request through the client proxy gets no answer in time (while the server itself is not asked). */
  private async clientsCut(node: N, answerMs: number, phase: EffectQuery['phase']): Promise<Look> {
    const [{ ms, answered }, direct] = await Promise.all([
      this.viaClients(node, answerMs),
      this.timed(this.sources.probeTarget(node), answerMs),
    ]);
    const through = answered
      ? `a request through the proxy answered in ${ms} ms`
      : `a request through the proxy: no answer in ${answerMs} ms`;
    const own = direct.answered
      ? `its own port answered in ${direct.ms} ms`
      : 'its own port: no answer either';
    // Cut: the server answers on its own port but not through the clients' path (a stopped server answers neither).
    return {
      effect: phase === 'started' ? !answered && direct.answered : !answered,
      detail: `${through}; ${own}`,
    };
  }

  /** Requests through the proxy take at least the added latency longer than requests to the server's own port. */
  private async slowed(node: N, answerMs: number, phase: EffectQuery['phase']): Promise<Look> {
    const added = this.requested.latencyMs(node.id) ?? 0;
    const direct = await this.timed(this.sources.probeTarget(node), answerMs);
    const proxied = await this.viaClients(node, answerMs);
    const extra = proxied.ms - direct.ms;
    // Started: the proxy's answer (or its silence) is later than the server's own by half the asked latency at
    // least (it is drawn with jitter), while the server itself answers: a server just as slow directly is not it.
    const effect =
      phase === 'started'
        ? direct.answered && added > 0 && extra >= added / 2
        : !proxied.answered || (added > 0 && extra >= added);
    return {
      effect,
      detail: `through the proxy ${proxied.answered ? `${proxied.ms} ms` : 'no answer'}, direct ${direct.ms} ms (added latency asked: ${added} ms)`,
    };
  }

  /**
   * The server's clock runs at the requested rate and, for a jump, reads the requested offset ahead (wall clocks:
   * against ours; ZooKeeper's uptime: against a reading taken before the fault). Healed: rate 1 again, and a wall
   * clock back on ours (a monotonic clock keeps its lead by design: it never steps back).
   */
  private async skewed(node: N, phase: EffectQuery['phase']): Promise<Look> {
    const read = this.sources.recipe.readClock;
    if (!read) return { effect: false, detail: 'this server has no clock to read' };
    const target = this.sources.probeTarget(node);
    // Read before the readings, and again after them: a look the fault's start or heal fell inside proves nothing.
    const asked = this.requested.clock(node.id);
    // A started look with no fault in force (not yet, or healed already) sees no effect of it, whatever it reads.
    if (phase === 'started' && !asked) return { effect: false, detail: 'no clock fault in force' };
    // A drift of a few per mille is lost in a 400 ms window's noise (and within the 30 % tolerance below of
    // any rate near 1): measured apart, over a window long enough for it to show.
    if (asked && asked.rate !== 1 && Math.abs(asked.rate - 1) < SMALL_DRIFT) {
      return this.slightlyDrifted(() => read(target), asked.rate);
    }
    const first = { realMs: Date.now(), reading: await read(target) };
    await sleep(CLOCK_WINDOW_MS);
    const second = { realMs: Date.now(), reading: await read(target) };
    const rate = (second.reading.ms - first.reading.ms) / Math.max(1, second.realMs - first.realMs);
    const wall = second.reading.wall;
    const request = this.requested.clock(node.id);
    if (!sameClockRequest(request, asked)) {
      const what = `${request ? 'applied' : 'healed'} while the clock was being read`;
      return { effect: phase === 'healed', detail: `the clock fault was ${what}` };
    }
    const lead = wall
      ? second.reading.ms - second.realMs
      : request?.before
        ? second.reading.ms - request.before.serverMs - (second.realMs - request.before.realMs)
        : undefined;
    const detail = `server clock runs at ${rate.toFixed(2)}x${lead === undefined ? '' : `, ${Math.round(lead)} ms ahead`}${request ? ` (asked: ${request.offsetMs} ms, ${request.rate}x)` : ''}`;
    const rateOff = (expected: number) => Math.abs(rate - expected) > 0.3 * expected;
    // A clock running backwards (a step back inside the window) or implausibly fast is no reading of a rate:
    // never the fault's effect, never a healed clock either.
    if (!(rate > 0 && rate < MAX_PLAUSIBLE_RATE))
      return { effect: phase === 'healed', detail: `${detail}: not a steady clock, no evidence` };
    if (!request) {
      // Healed: real speed, and a wall clock agrees with ours.
      const off = rateOff(1) || (wall && lead !== undefined && Math.abs(lead) > 500);
      // A wall clock's server (Redis) expires what it granted under the skew by that clock: a key set with PX
      // while the clock ran ahead lives on that much past the heal. The effect ends when the longest such
      // grant could have run out on the server's real time (#20).
      const healed = wall ? this.requested.clockHealed?.(node.id) : undefined;
      const outlastsMs = healed ? healed.healedAtMs + healed.leadMs - Date.now() : 0;
      if (!off && outlastsMs > 0) {
        return {
          effect: true,
          detail: `${detail}; what was granted under the ${healed?.leadMs} ms lead may live ${Math.round(outlastsMs)} ms more`,
        };
      }
      return { effect: off, detail };
    }
    if (request.rate !== 1) return { effect: !rateOff(request.rate), detail };
    const tolerance = Math.max(500, Math.abs(request.offsetMs) / 10);
    if (lead === undefined)
      return { effect: false, detail: `${detail}; no reading from before the fault to compare with` };
    if (!wall && request.offsetMs < 0)
      return {
        effect: false,
        detail: `${detail}; a backward jump does not show in a clock that never steps back`,
      };
    return { effect: !rateOff(1) && Math.abs(lead - request.offsetMs) <= tolerance, detail };
  }

  /**
   * A small drift (`rate` within `SMALL_DRIFT` of 1): the server's clock gains `(rate − 1) × window` over
   * ours, measured between two readings a window apart, each stamped at the midpoint of its request (its
   * round trip bounds the stamp's error; each the quickest answer of three). Seen when the gain is within half of the asked one and the
   * readings' error is below half of it; too uncertain (a slow answer) counts as not seen, and the caller
   * probes again.
   */
  private async slightlyDrifted(read: () => Promise<{ ms: number }>, rate: number): Promise<Look> {
    const once = async () => {
      const sent = performance.now();
      const { ms } = await read();
      const answered = performance.now();
      return { serverMs: ms, atMs: (sent + answered) / 2, errorMs: (answered - sent) / 2 };
    };
    // The best of three: on a loaded host one answer in a few waits tens of ms for the scheduler.
    const reading = async () => {
      let best = await once();
      for (let i = 0; i < 2; i++) {
        const next = await once();
        if (next.errorMs < best.errorMs) best = next;
      }
      return best;
    };
    const windowMs = Math.min(3_000, Math.max(CLOCK_WINDOW_MS, Math.round(12 / Math.abs(rate - 1))));
    const first = await reading();
    await sleep(windowMs);
    const second = await reading();
    const realMs = second.atMs - first.atMs;
    const gained = second.serverMs - first.serverMs - realMs;
    const asked = (rate - 1) * realMs;
    // Each stamp is off by at most half its round trip; the server's readings by their resolution.
    const error = first.errorMs + second.errorMs + 1;
    const detail = `server clock gained ${gained.toFixed(1)} ms on ours in ${Math.round(realMs)} ms (${(1 + gained / realMs).toFixed(4)}x; asked ${rate}x: ${asked.toFixed(1)} ms; reading error ±${error.toFixed(1)} ms)`;
    if (error > Math.abs(asked) / 2) return { effect: false, detail: `${detail}: too uncertain to tell` };
    return { effect: Math.abs(gained - asked) <= Math.abs(asked) / 2, detail };
  }

  /**
   * Partitioned: a request needing a quorum through a member on the minority side does not complete (seen at once,
   * before the members themselves notice), or some member has no leader or names another one. Healed: the request
   * completes and every member names the same leader.
   */
  private async partitioned(
    id: string | undefined,
    answerMs: number,
    phase: EffectQuery['phase'],
  ): Promise<Look> {
    const { recipe } = this.sources;
    if (!recipe.leaderAgreement)
      return { effect: false, detail: 'these servers have no leader to ask about' };
    const minority = id === undefined ? undefined : this.sources.node(id);
    const [views, quorum] = await Promise.all([
      recipe.leaderAgreement(this.sources.members.map((n) => this.sources.probeTarget(n))),
      minority && recipe.quorumRequest
        ? recipe.quorumRequest(this.sources.probeTarget(minority), answerMs)
        : Promise.resolve(undefined),
    ]);
    const through =
      quorum === undefined
        ? ''
        : `; a quorum request through ${id} ${quorum ? 'completed' : `did not complete in ${answerMs} ms`}`;
    const detail = `${views.detail}${through}`;
    if (phase === 'healed') return { effect: !views.agreed || quorum === false, detail };
    // Started: a member that did not answer at all (stopped, slow) says nothing of a partition (#20); only members
    // that answered count, and a quorum request failing through a member that did not answer either.
    const silent = new Set(views.silent ?? []);
    if (silent.size === 0) return { effect: !views.agreed || quorum === false, detail };
    const answering = this.sources.members
      .filter((n) => !silent.has(n.id))
      .map((n) => this.sources.probeTarget(n));
    const among = answering.length > 0 ? await recipe.leaderAgreement(answering) : undefined;
    const split = among !== undefined && !among.agreed && (among.silent ?? []).length === 0;
    return { effect: split || (quorum === false && id !== undefined && !silent.has(id)), detail };
  }

  private viaClients(node: N, answerMs: number): Promise<{ ms: number; answered: boolean }> {
    const [host, port] = node.endpoint.split(':') as [string, string];
    return this.timed({ id: node.id, host, port: Number(port) }, answerMs);
  }

  /** One readiness request with the server's own protocol, timed; unanswered (and closed) after `answerMs`. */
  private async timed(target: ProbeTarget, answerMs: number): Promise<{ ms: number; answered: boolean }> {
    const started = performance.now();
    const answered = await this.sources.recipe.ready(target, answerMs).then(
      () => true,
      () => false,
    );
    return { ms: Math.round(performance.now() - started), answered };
  }
}

type ClockRequest = ReturnType<RequestedFaults['clock']>;

/** The same clock fault asked (or none at both times). */
function sameClockRequest(a: ClockRequest, b: ClockRequest): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.offsetMs === b.offsetMs && a.rate === b.rate && a.before?.realMs === b.before?.realMs;
}
