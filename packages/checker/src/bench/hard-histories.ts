/**
 * A seeded generator of hard cas-register histories (issue 15, "hard histories"): many processes,
 * hundreds of ops, a small value domain, cas, and many crashed (`:info`) ops. Written in porcupine's
 * Jepsen log format (`INFO  jepsen.util - P	:type	:f	value`), which both fencekit and a porcupine
 * harness read the same way: `:fail :cas` is a cas whose compare failed, `:info` leaves the op open
 * to the end (it may have taken effect at any point after its call, or never).
 *
 * Linearizable by construction: a real register is simulated with concurrent clients; each op takes
 * effect at one instant between its invoke and its completion, and a crashed write or cas took effect
 * or not at random. A crashed client comes back under a new process id, as Jepsen's do.
 *
 * Mutated: one completed op's outcome is changed afterwards (a read's value, a cas's result), which
 * usually makes the history illegal; the truth of a mutated history is not known by construction and
 * must be established by a search (see `hard-histories-make.ts`).
 */

/** xorshift32, seeded: the same seed gives the same history everywhere. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = (seed * 0x9e3779b1) >>> 0 || 1;
  }
  next(): number {
    let s = this.#s;
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    this.#s = s;
    return s / 2 ** 32;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

export interface HardParams {
  seed: number;
  /** Concurrent clients (12–30). */
  processes: number;
  /** Operations in all (300–1000). */
  ops: number;
  /** Values written are 0 … domain-1. */
  domain: number;
  /** Probability that a write or cas crashes (completes `:info`). */
  crash: number;
  /** Share of reads, writes, cas (the rest). */
  reads: number;
  writes: number;
  /** Longest op (time units; default 220, shortest 20) and longest think time between a client's ops (default 15). */
  latency?: number;
  think?: number;
  /**
   * A buggy register instead of a correct one: each completed write or cas that swapped is lost
   * (acknowledged, never applied) with probability `lostWrites`, and each read returns the value
   * before the latest change with probability `staleReads`. The truth of such a history is not known
   * by construction (the bug may go unobserved).
   */
  lostWrites?: number;
  staleReads?: number;
  /**
   * Split brain: for this many effects in the middle of the run, the odd-numbered clients work on a
   * copy of the register taken when the window opens, and what they write there is lost when it
   * closes (a partitioned minority that kept answering).
   */
  splitBrain?: number;
}

export interface GeneratedOp {
  process: number;
  f: 'read' | 'write' | 'cas';
  /** write: the value; cas: [old, new]. */
  input: number | [number, number] | null;
  /** read: the value read; cas: whether it swapped. */
  output: number | boolean | null;
  /** 'ok', 'fail' (a cas whose compare failed), 'info' (crashed: no completion line). */
  status: 'ok' | 'fail' | 'info';
  call: number;
  ret: number;
  /** When the client saw the crash (logged `:info` then); the op itself stays open to the end. */
  crashedAt?: number;
}

/**
 * Simulates the register: each client alternates a think time and an op whose effect falls at a random
 * instant of its interval. Ops are long against think times, so most of the clients overlap at once.
 */
export function generateHard(p: HardParams): GeneratedOp[] {
  const rng = new Rng(p.seed);
  interface Pending {
    op: GeneratedOp;
    at: number;
    client: number;
  }
  // Plan the intervals first: per client, back to back with short gaps.
  const plans: { client: number; call: number; at: number; ret: number }[] = [];
  const clientTime = Array.from({ length: p.processes }, () => rng.int(20));
  for (let i = 0; i < p.ops; i++) {
    let client = 0;
    for (let c = 1; c < p.processes; c++)
      if ((clientTime[c] as number) < (clientTime[client] as number)) client = c;
    const call = clientTime[client] as number;
    const length = 20 + rng.int((p.latency ?? 220) - 20);
    const at = call + 1 + rng.int(length - 1);
    const ret = call + length;
    plans.push({ client, call, at, ret });
    clientTime[client] = ret + 1 + rng.int(p.think ?? 15);
  }
  // Effects in time order on one register; the history starts with a completed write of 0.
  const ops: GeneratedOp[] = [];
  const pending: Pending[] = [];
  const processOf = Array.from({ length: p.processes }, (_, c) => c + 1);
  for (const plan of plans) {
    const roll = rng.next();
    const f = roll < p.reads ? 'read' : roll < p.reads + p.writes ? 'write' : 'cas';
    const crashed = f !== 'read' ? rng.next() < p.crash : rng.next() < p.crash / 4;
    const op: GeneratedOp = {
      process: processOf[plan.client] as number,
      f,
      input: f === 'write' ? rng.int(p.domain) : f === 'cas' ? [rng.int(p.domain), rng.int(p.domain)] : null,
      output: null,
      status: crashed ? 'info' : 'ok',
      call: plan.call,
      ret: crashed ? Number.POSITIVE_INFINITY : plan.ret,
    };
    if (crashed) op.crashedAt = plan.ret;
    if (crashed) processOf[plan.client] = (processOf[plan.client] as number) + p.processes;
    ops.push(op);
    // A crashed write or cas took effect or not, at random; a crashed read has no effect to speak of.
    if (!crashed || rng.next() < 0.5) pending.push({ op, at: plan.at, client: plan.client });
  }
  pending.sort((a, b) => a.at - b.at);
  let value = 0;
  let before = 0;
  const set = (v: number, op: GeneratedOp): void => {
    if (op.status !== 'info' && rng.next() < (p.lostWrites ?? 0)) return; // acknowledged, lost
    if (v !== value) before = value;
    value = v;
  };
  const windowFrom = (pending.length - (p.splitBrain ?? 0)) >> 1;
  const windowTo = windowFrom + (p.splitBrain ?? 0);
  let replica = 0;
  pending.forEach(({ op, client }, i) => {
    if (i === windowFrom) replica = value; // the minority's copy, taken as the window opens
    if (i >= windowFrom && i < windowTo && client % 2 === 1) {
      const main = value;
      value = replica;
      step(op);
      replica = value;
      value = main;
    } else step(op);
  });
  function step(op: GeneratedOp): void {
    if (op.f === 'read') op.output = rng.next() < (p.staleReads ?? 0) ? before : value;
    else if (op.f === 'write') set(op.input as number, op);
    else {
      const [from, to] = op.input as [number, number];
      const swapped = value === from;
      if (swapped) set(to, op);
      if (op.status !== 'info') {
        op.output = swapped;
        op.status = swapped ? 'ok' : 'fail';
      }
    }
  }
  return ops;
}

export type Mutation = 'read-value' | 'cas-result';

/**
 * Changes one completed op's outcome, picked by `rng`: a read's value to another value of the domain,
 * or a cas's result (swapped ↔ failed), in the middle half of the history or its first tenth.
 * Returns a description, or undefined if there was nothing to mutate.
 */
export function mutate(
  ops: GeneratedOp[],
  kind: Mutation,
  domain: number,
  rng: Rng,
  where: 'middle' | 'early' = 'middle',
): string | undefined {
  const candidates = ops
    .map((op, i) => ({ op, i }))
    .filter(({ op }) =>
      kind === 'read-value' ? op.f === 'read' && op.status === 'ok' : op.f === 'cas' && op.status !== 'info',
    );
  if (candidates.length === 0) return undefined;
  // In the middle half of the history, where concurrency is highest; or early (the first tenth),
  // before many crashed ops have been called (each may take effect at any later point, so every
  // crashed write called before an op can explain what it saw).
  const lo = where === 'early' ? 0 : Math.floor(candidates.length / 4);
  const span = where === 'early' ? Math.ceil(candidates.length / 10) : candidates.length >> 1;
  const pick = candidates[lo + rng.int(Math.max(1, span))] as { op: GeneratedOp; i: number };
  const { op, i } = pick;
  if (kind === 'read-value') {
    const old = op.output as number;
    const now = (old + 1 + rng.int(domain - 1)) % domain;
    op.output = now;
    return `op ${i} (process ${op.process}): read ${old} → ${now}`;
  }
  const swapped = op.status === 'ok';
  op.status = swapped ? 'fail' : 'ok';
  op.output = !swapped;
  return `op ${i} (process ${op.process}): cas ${JSON.stringify(op.input)} ${swapped ? 'swapped → failed' : 'failed → swapped'}`;
}

/** The history as porcupine/Jepsen log lines, events in time order (completions before invokes at a tie: never). */
export function toPorcupineLog(ops: readonly GeneratedOp[]): string {
  const events: { time: number; order: number; line: string }[] = [];
  const show = (v: GeneratedOp['input']): string =>
    v === null ? 'nil' : Array.isArray(v) ? `[${v[0]} ${v[1]}]` : String(v);
  // Process 0 writes the initial 0 before anything else.
  events.push({ time: -2, order: 0, line: 'INFO  jepsen.util - 0\t:invoke\t:write\t0' });
  events.push({ time: -1, order: 0, line: 'INFO  jepsen.util - 0\t:ok\t:write\t0' });
  for (const op of ops) {
    const value = op.f === 'read' ? 'nil' : show(op.input);
    events.push({
      time: op.call,
      order: 1,
      line: `INFO  jepsen.util - ${op.process}\t:invoke\t:${op.f}\t${value}`,
    });
    if (op.status === 'info') {
      // Jepsen logs the crash; the op stays open to the end.
      events.push({
        time: op.crashedAt ?? op.call,
        order: 0,
        line: `INFO  jepsen.util - ${op.process}\t:info\t:${op.f}\t${op.f === 'read' ? ':timed-out' : show(op.input)}`,
      });
      continue;
    }
    const out = op.f === 'read' ? String(op.output) : show(op.input);
    events.push({
      time: op.ret,
      order: 0,
      line: `INFO  jepsen.util - ${op.process}\t:${op.status}\t:${op.f}\t${out}`,
    });
  }
  // At equal times a completion goes first: the ops do not overlap, as in the simulation (ret < call there).
  events.sort((a, b) => a.time - b.time || a.order - b.order);
  return `${events.map((e) => e.line).join('\n')}\n`;
}
