import { pairOperations } from '../history/pairing.js';
import type { HistoryEvent, Operation, Verdict } from '../history/types.js';
import { type AnyModel, describeOperation } from '../models/model.js';
import { layoutHistory, type SearchLayout } from './history-order.js';
import { realizeLinearization, Search, type SearchOptions, type SearchStatus } from './search.js';
import { buildWitness, type Witness } from './witness.js';

export interface CheckOptions {
  /** Total time budget; partitions still undecided then are `unknown`. Default 60 s. */
  timeoutMs?: number;
  /** Memory budget for the search's caches and states together; a partition over it is `unknown`. Default 1 GiB. */
  memoryBytes?: number;
  /** Decide every partition (default), or stop at the first illegal one as porcupine's plain check does. */
  perPartition?: boolean;
  /** Round-robin slice per partition, so one hard key does not starve the rest. Default 50 ms. */
  sliceMs?: number;
  /** Run the models' cheap convictions before searching (default true). */
  convict?: boolean;
  /** When a conviction decides a partition, still search it for the longest linearizable prefix. Default false. */
  diagnose?: boolean;
  /** Search variants (all sound); the defaults are the fastest. For cross-checks and benchmarks. */
  search?: SearchOptions;
}

/** The verdict for one independent sub-history (one key, with P-compositionality). */
export interface PartitionResult {
  /** The partition key, or undefined when the model does not partition. */
  key: string | undefined;
  verdict: Verdict;
  /** Ids of the partition's ops (failed ops excluded). */
  opIds: number[];
  /** ok: a full linearization (op ids in order; ops with unknown outcome that never took effect are absent). */
  linearization?: number[];
  /**
   * illegal: why, with the longest linearizable prefix the search found. unknown: the longest partial
   * linearization found before the budget ran out (its `unplaced` ops are not proven unplaceable).
   */
  witness?: Witness;
  /** unknown: what ran out. */
  reason?: 'timeout' | 'memory' | 'skipped' | 'aborted' | 'error';
  error?: string;
  steps: number;
  cacheEntries: number;
  ms: number;
}

export interface LinearizabilityResult {
  /** `illegal` if any partition is, else `unknown` if any is, else `ok`. */
  verdict: Verdict;
  partitions: PartitionResult[];
  stats: { ops: number; partitions: number; steps: number; ms: number; peakBytes: number };
}

interface Job {
  result: PartitionResult;
  ops: Operation[];
  layout: SearchLayout;
  /** The model's form of `layout.ops`, prepared up front (bad input fails before any search). */
  prepared: unknown[];
  /** Created at the partition's first slice and dropped once it is decided, so thousands of small
   * partitions never hold their caches all at once. */
  search: Search | undefined;
  /**
   * The relaxed search (optional ops reusable), run beside the exact one while the partition has
   * optional ops: its `illegal` is final, its `ok` counts when the uses get distinct ops.
   */
  relaxed: Search | undefined;
  relaxedDone: boolean;
  relaxedSteps: number;
  /** Per slot, 1 while the relaxed search may reuse it (refined when a linearization overuses a kind). */
  reusable: Uint8Array | undefined;
  /** The layout's entry lists as laid out, before any search unlinked ops from them. */
  pristine: SearchLayout;
  done: boolean;
}

/**
 * Checks that a history is linearizable with respect to `model`. Accepts raw events (paired here,
 * `fail` ops dropped, `info` ops open) or already paired operations. Partitions (when the model
 * partitions) are searched round-robin in time slices; each ends `ok` with a linearization,
 * `illegal` with a witness, or `unknown` when the time or memory budget ran out — never a pass.
 * Throws `HistoryShapeError` when an op makes no sense for the model (bad input, not a verdict).
 * Runs synchronously; `checkLinearizableAsync` yields to the event loop between slices.
 */
export function checkLinearizable(
  history: readonly HistoryEvent[] | readonly Operation[],
  model: AnyModel,
  options: CheckOptions = {},
): LinearizabilityResult {
  const run = new CheckRun(history, model, options);
  while (run.pass());
  return run.finish();
}

/**
 * `checkLinearizable` that yields to the event loop after every round of slices, so timers and I/O
 * keep running, and stops when `signal` aborts: partitions still undecided then are `unknown` with
 * reason `aborted`. Resolves; never rejects for a verdict (only for bad input).
 */
export async function checkLinearizableAsync(
  history: readonly HistoryEvent[] | readonly Operation[],
  model: AnyModel,
  options: CheckOptions & { signal?: AbortSignal } = {},
): Promise<LinearizabilityResult> {
  const run = new CheckRun(history, model, options);
  while (!options.signal?.aborted && run.pass()) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return run.finish(options.signal?.aborted === true);
}

/** One check in progress: its partitions (jobs), budgets and bookkeeping. */
class CheckRun {
  readonly #started = performance.now();
  readonly #model: AnyModel;
  readonly #ops: Operation[];
  readonly #jobs: Job[];
  readonly #budget: Budget;
  readonly #state = { peakBytes: 0, stop: false };

  constructor(
    history: readonly HistoryEvent[] | readonly Operation[],
    model: AnyModel,
    options: CheckOptions,
  ) {
    this.#model = model;
    this.#budget = {
      deadline: this.#started + (options.timeoutMs ?? 60_000),
      memoryBytes: options.memoryBytes ?? 2 ** 30,
      sliceMs: options.sliceMs ?? 50,
      perPartition: options.perPartition ?? true,
      search: options.search ?? {},
    };
    this.#ops = toOperations(history);
    // Setting a partition up (layout, prepared ops, conviction) spends from the same budget as its
    // search: with 100 000 keys it took seconds. Partitions not reached by the deadline are unknown
    // (timeout), unprepared; the clock is read once per partition, a few ms for 100 000.
    this.#jobs = [];
    for (const [key, partOps] of partition(this.#ops, model)) {
      if (performance.now() >= this.#budget.deadline) {
        this.#jobs.push(unreachedJob(key, partOps));
        continue;
      }
      const job = newJob(key, partOps, model);
      this.#jobs.push(job);
      if (options.convict !== false) convictJob(job, model, options.diagnose === true);
      if (job.result.verdict === 'illegal' && !this.#budget.perPartition) this.#state.stop = true;
    }
  }

  /** One round-robin pass over the undecided partitions; false once there is nothing left to do. */
  pass(): boolean {
    const active = this.#jobs.filter((job) => !job.done);
    if (active.length === 0 || this.#state.stop || performance.now() >= this.#budget.deadline) return false;
    roundRobinPass(active, this.#model, this.#budget, this.#state);
    return true;
  }

  finish(aborted = false): LinearizabilityResult {
    for (const job of this.#jobs) {
      if (job.result.verdict === 'unknown' && job.result.reason === undefined) {
        job.result.reason = aborted ? 'aborted' : this.#state.stop ? 'skipped' : 'timeout';
        if (job.search !== undefined && job.search.bestDepth > 0) {
          job.result.witness = partialWitness(job, this.#model, job.search);
        }
      }
      release(job);
    }
    const partitions = this.#jobs.map((job) => job.result);
    return {
      verdict: worstVerdict(partitions.map((p) => p.verdict)),
      partitions,
      stats: {
        ops: this.#ops.length,
        partitions: partitions.length,
        steps: partitions.reduce((sum, p) => sum + p.steps, 0),
        ms: performance.now() - this.#started,
        peakBytes: this.#state.peakBytes,
      },
    };
  }
}

function newJob(key: string | undefined, partOps: Operation[], model: AnyModel): Job {
  const layout = layoutHistory(partOps);
  return {
    result: {
      key,
      verdict: 'unknown',
      opIds: layout.ops.map((op) => op.id),
      steps: 0,
      cacheEntries: 0,
      ms: 0,
    },
    ops: partOps,
    layout,
    prepared: layout.ops.map((op) => model.prepare(op)),
    search: undefined,
    relaxed: undefined,
    relaxedDone: false,
    relaxedSteps: 0,
    reusable: undefined,
    pristine: ownLists(layout),
    done: false,
  };
}

const NO_LAYOUT: SearchLayout = layoutHistory([]);

/** A partition the budget ran out before: unknown (timeout), never laid out or prepared. */
function unreachedJob(key: string | undefined, partOps: Operation[]): Job {
  return {
    result: {
      key,
      verdict: 'unknown',
      reason: 'timeout',
      opIds: partOps.filter((op) => op.status !== 'fail').map((op) => op.id),
      steps: 0,
      cacheEntries: 0,
      ms: 0,
    },
    ops: partOps,
    layout: NO_LAYOUT,
    prepared: [],
    search: undefined,
    relaxed: undefined,
    relaxedDone: false,
    relaxedSteps: 0,
    reusable: undefined,
    pristine: NO_LAYOUT,
    done: true,
  };
}

/** A cheap conviction decides the partition; its search is kept only to diagnose (longest prefix). */
function convictJob(job: Job, model: AnyModel, diagnose: boolean): void {
  if (model.convict === undefined) return;
  const t = performance.now();
  const conviction = model.convict(job.layout.ops);
  job.result.ms += performance.now() - t;
  if (conviction === undefined) return;
  const describe = model.describe ?? describeOperation;
  const byId = new Map(job.layout.ops.map((op) => [op.id, op]));
  job.result.verdict = 'illegal';
  job.result.witness = {
    prefix: [],
    finalState: '',
    unplaced: conviction.opIds.map((id) => ({
      id,
      description: byId.has(id) ? describe(byId.get(id) as Operation) : `op ${id}`,
      reason: conviction.reason,
    })),
    conviction: conviction.reason,
  };
  if (!diagnose) release(job);
}

interface Budget {
  deadline: number;
  memoryBytes: number;
  sliceMs: number;
  perPartition: boolean;
  search: SearchOptions;
}

/** Gives each undecided partition one slice, sharing the memory budget among the live searches. */
function roundRobinPass(
  active: Job[],
  model: AnyModel,
  budget: Budget,
  state: { peakBytes: number; stop: boolean },
): void {
  const sliceEnd = Math.min(budget.deadline, performance.now() + budget.sliceMs);
  let liveBytes = 0;
  for (const job of active) liveBytes += (job.search?.bytes ?? 0) + (job.relaxed?.bytes ?? 0);
  for (const job of active) {
    if (job.done) continue;
    // A small key is decided within its first slice, before the search reads the clock: without this
    // look, 100 000 of them were all searched after the deadline had passed.
    if (performance.now() >= budget.deadline) return;
    if (
      job.relaxed === undefined &&
      !job.relaxedDone &&
      budget.search.relax === true &&
      job.layout.ops.length > job.layout.required
    ) {
      if (job.reusable === undefined) {
        job.reusable = new Uint8Array(job.layout.ops.length);
        job.reusable.fill(1, job.layout.required);
      }
      job.relaxed = new Search(model, ownLists(job.pristine), job.prepared, {
        ...budget.search,
        reusable: job.reusable,
      });
    }
    const relaxed = job.relaxed;
    if (relaxed !== undefined) {
      const t = performance.now();
      const before = relaxed.bytes;
      const until = budget.search.relaxFirst === true ? sliceEnd : t + (sliceEnd - t) / 2;
      const status = relaxed.run(until, budget.memoryBytes - (liveBytes - before));
      liveBytes += relaxed.bytes - before;
      state.peakBytes = Math.max(state.peakBytes, liveBytes);
      job.result.ms += performance.now() - t;
      if (status !== 'running') {
        liveBytes -= relaxed.bytes;
        const overused = new Set<number>();
        const real =
          status === 'ok'
            ? realizeLinearization(
                job.layout,
                relaxed.prepared,
                relaxed.linearization as Int32Array,
                false,
                overused,
              )
            : undefined;
        if (status === 'illegal' || real !== undefined) {
          liveBytes -= job.search?.bytes ?? 0;
          settleRelaxed(job, model, relaxed, real);
          release(job);
          if (job.result.verdict === 'illegal' && !budget.perPartition) {
            state.stop = true;
            return;
          }
          continue;
        }
        // ok, but some kinds were used more often than they have ops: those become exact (used up
        // once placed) and a new relaxed search starts; out of memory, or nothing left to refine:
        // the exact search alone decides.
        job.relaxedSteps += relaxed.steps;
        job.relaxed = undefined;
        const reusable = job.reusable as Uint8Array;
        let refined = false;
        for (const slot of overused) {
          if (reusable[slot] === 1) refined = true;
          reusable[slot] = 0;
        }
        if (status !== 'ok' || !refined || !reusable.includes(1)) job.relaxedDone = true;
        else
          job.relaxed = new Search(model, ownLists(job.pristine), job.prepared, {
            ...budget.search,
            reusable,
          });
      }
    }
    if (budget.search.relaxFirst === true && job.relaxed !== undefined) continue;
    job.search ??= new Search(model, job.layout, job.prepared, budget.search);
    const search = job.search;
    const t = performance.now();
    const before = search.bytes;
    const status = search.run(sliceEnd, budget.memoryBytes - (liveBytes - before));
    liveBytes += search.bytes - before;
    state.peakBytes = Math.max(state.peakBytes, liveBytes);
    job.result.ms += performance.now() - t;
    if (status === 'running') {
      if (performance.now() >= budget.deadline) return;
      continue;
    }
    liveBytes -= search.bytes + (job.relaxed?.bytes ?? 0);
    settle(job, model, search, status);
    release(job);
    if (job.result.verdict === 'illegal' && !budget.perPartition) {
      state.stop = true;
      return;
    }
  }
}

/** The layout with its own entry lists: a search unlinks and relinks them as it places ops. */
function ownLists(layout: SearchLayout): SearchLayout {
  return {
    ...layout,
    next: layout.next.slice(),
    prev: layout.prev.slice(),
    optNext: layout.optNext.slice(),
    optPrev: layout.optPrev.slice(),
  };
}

/** The relaxed search decided: `illegal`, or `ok` with `real`, its linearization with distinct ops. */
function settleRelaxed(job: Job, model: AnyModel, relaxed: Search, real: Int32Array | undefined): void {
  const { ops } = job.layout;
  if (real !== undefined) {
    if (job.result.verdict === 'illegal')
      throw new Error(`conviction contradicted by a linearization in partition ${job.result.key}`);
    job.result.verdict = 'ok';
    job.result.linearization = [...real].map((slot) => (ops[slot] as Operation).id);
    return;
  }
  const prefix = realizeLinearization(job.layout, relaxed.prepared, relaxed.bestPath, true) as Int32Array;
  const witness = buildWitness(model, job.layout, relaxed.prepared, prefix);
  const earlier = job.result.witness;
  if (earlier?.conviction !== undefined) {
    witness.conviction = earlier.conviction;
    witness.unplaced = earlier.unplaced;
  }
  job.result.verdict = 'illegal';
  job.result.witness = witness;
}

function settle(job: Job, model: AnyModel, search: Search, status: SearchStatus): void {
  const { ops } = job.layout;
  if (status === 'out-of-memory') {
    if (job.result.verdict !== 'illegal') {
      job.result.reason = 'memory';
      job.result.witness = partialWitness(job, model, search);
    }
    return;
  }
  if (status === 'ok') {
    // A conviction and a linearization together would mean an unsound conviction: say so loudly.
    if (job.result.verdict === 'illegal')
      throw new Error(`conviction contradicted by a linearization in partition ${job.result.key}`);
    job.result.verdict = 'ok';
    job.result.linearization = [...(search.linearization ?? [])].map((slot) => (ops[slot] as Operation).id);
    return;
  }
  const witness = buildWitness(model, job.layout, search.prepared, search.bestPath);
  const earlier = job.result.witness;
  if (earlier?.conviction !== undefined) {
    witness.conviction = earlier.conviction;
    witness.unplaced = earlier.unplaced;
  }
  job.result.verdict = 'illegal';
  job.result.witness = witness;
}

/** For an undecided partition: the longest partial linearization found so far, for display. */
function partialWitness(job: Job, model: AnyModel, search: Search): Witness {
  return buildWitness(model, job.layout, search.prepared, search.bestPath);
}

function release(job: Job): void {
  job.done = true;
  if (job.search === undefined && job.relaxed === undefined) return; // released already (or never searched)
  if (job.relaxed !== undefined) job.relaxedSteps += job.relaxed.steps;
  job.result.steps = (job.search?.steps ?? 0) + job.relaxedSteps;
  job.result.cacheEntries = (job.search?.cache.size ?? 0) + (job.relaxed?.cache.size ?? 0);
  job.search = undefined; // frees the cache as soon as the partition is decided
  job.relaxed = undefined;
}

function toOperations(history: readonly HistoryEvent[] | readonly Operation[]): Operation[] {
  const first = history[0];
  if (first !== undefined && 'type' in first) return pairOperations(history as readonly HistoryEvent[]);
  return history as Operation[];
}

function partition(ops: readonly Operation[], model: AnyModel): [string | undefined, Operation[]][] {
  if (model.partition === undefined) return [[undefined, [...ops]]];
  const parts = new Map<string, Operation[]>();
  for (const op of ops) {
    const key = model.partition(op);
    const list = parts.get(key);
    if (list === undefined) parts.set(key, [op]);
    else list.push(op);
  }
  return [...parts];
}

/** Jepsen's composition: illegal beats unknown beats ok. */
function worstVerdict(verdicts: readonly Verdict[]): Verdict {
  if (verdicts.includes('illegal')) return 'illegal';
  if (verdicts.includes('unknown')) return 'unknown';
  return 'ok';
}
