import type { Operation } from '../history/types.js';
import { type AnyModel, Inconsistent, type Reachability } from '../models/model.js';
import { canonicalJson } from '../models/values.js';
import { ConfigCache } from './cache.js';
import type { SearchLayout } from './history-order.js';
import { StateTable } from './states.js';

/** Search variants, for cross-checks and measurements. */
export interface SearchOptions {
  /** Skip configurations that use more optional ops than an explored one with the same completed ops and state (default true). */
  subsume?: boolean;
  /** Skip an op placed right after optional ops when it does the same without them (default true). */
  redundant?: boolean;
  /**
   * Relaxed search: the optional slots marked 1 here, once called, may be used any number of times.
   * Every linearization is a relaxed one, so `illegal` here is `illegal`; an `ok` is a real
   * linearization only if the uses can be given distinct ops (`realizeLinearization`). The reusable
   * ops take no place in the configurations. Default: none (the exact search).
   */
  reusable?: Uint8Array;
  /**
   * For `checkLinearizable`: run relaxed searches beside the exact one, each refined (the kinds a
   * linearization overused made exact) until one decides (default false: on the generated hard
   * histories it decided nothing the exact search did not, and halved the exact search's time).
   */
  relax?: boolean;
  /** With `relax`: the exact search starts only once the relaxed ones have settled nothing (for tests). */
  relaxFirst?: boolean;
}

/** Where a search stands after `run`. */
export type SearchStatus = 'ok' | 'illegal' | 'running' | 'out-of-memory';

const REQUIRED_PHASE = 0;
const OPTIONAL_PHASE = 1;

/**
 * The Wing–Gong/Lowe search with porcupine's cache of (linearized-set bitset, state), resumable so
 * partitions can share time round-robin. Beyond porcupine:
 * - ops with unknown outcomes are optional: the search succeeds once every completed op is placed,
 *   and tries optional ops only after the completed ones at each step;
 * - optional ops with the same effect are interchangeable, so only the earliest-called unplaced one
 *   of each kind is tried (symmetry breaking), and one that would change nothing is never placed;
 * - a completed read-only op (a read, a failed cas: `model.readOnly`) that is enabled and legal is
 *   placed greedily with no alternative to try: any linearization that places it later stays valid
 *   with it moved here, since it changes no state wherever it goes;
 * - a model may say when a configuration can no longer reach some op's result (`model.unreachable`),
 *   which abandons it at once;
 * - the bitset's hash is updated incrementally (Zobrist: xor of one random word per op), and the cache
 *   stores only the window of words between the all-placed prefix and the none-placed suffix.
 */
export class Search {
  readonly states: StateTable;
  readonly cache: ConfigCache;
  readonly prepared: unknown[];
  /** Model steps taken so far. */
  steps = 0;
  /** Most completed ops placed at once (the slots placed then: `bestPath`, for witnesses). */
  bestDepth = 0;
  #bestPath: Int32Array = new Int32Array(0);
  /** When ok: the slots in linearization order. */
  linearization: Int32Array | undefined;

  readonly #layout: SearchLayout;
  readonly #model: AnyModel;
  readonly #bits: Uint32Array;
  readonly #zobrist: Int32Array;
  /** For an optional slot, the previous optional slot with the same effect (-1 if none). */
  readonly #twin: Int32Array;
  /** 1 for completed ops the model calls read-only: placed greedily. */
  readonly #readOnly: Uint8Array;
  readonly #unreachable: Reachability<unknown> | undefined;
  readonly #isPlaced = (slot: number): boolean =>
    ((this.#bits[this.#wordOf[slot] as number] as number) & (this.#maskOf[slot] as number)) !== 0;
  /** Bit of each slot: completed ops fill words [0, requiredWords), optional ops start on a fresh word. */
  readonly #wordOf: Int32Array;
  readonly #maskOf: Int32Array;
  /** Per completed-op word, the value it has once all its ops are placed. */
  readonly #fullWord: Uint32Array;
  readonly #requiredWords: number;
  /** The placed completed ops' window: words below `low` full, from `high` on empty. */
  #low = 0;
  #high = 0;
  /** True while the current stack is the deepest placement seen and not yet copied to `bestPath`. */
  #atBest = false;
  #stackSlot: Int32Array;
  #stackState: Int32Array;
  #stackForced: Uint8Array;
  #stackLimit: Float64Array;
  /** Per stack entry: the state before the run of optional ops it ends (its own state before, if required). */
  #stackBase: Int32Array;
  readonly #redundant: boolean;
  /** Per slot, 1 if never used up (see `SearchOptions.reusable`). */
  readonly #reusable: Uint8Array;
  #sp = 0;
  #phase = REQUIRED_PHASE;
  #entry: number;
  #limit = 0;
  #current: number;
  #placed = 0;
  #hash = 0;
  #status: SearchStatus = 'running';

  /** `prepared`: the layout's ops through `model.prepare`, if the caller already has them. */
  constructor(model: AnyModel, layout: SearchLayout, prepared?: unknown[], options: SearchOptions = {}) {
    this.#model = model;
    this.#layout = layout;
    const n = layout.ops.length;
    this.prepared = prepared ?? layout.ops.map((op) => model.prepare(op));
    const R = layout.required;
    const requiredWords = Math.ceil(R / 32);
    this.#requiredWords = requiredWords;
    this.#bits = new Uint32Array(Math.max(1, requiredWords + Math.ceil((n - R) / 32)));
    this.cache = new ConfigCache(requiredWords, this.#bits.length, 64, options.subsume ?? true);
    this.#wordOf = new Int32Array(n);
    this.#maskOf = new Int32Array(n);
    for (let slot = 0; slot < n; slot++) {
      const index = slot < R ? slot : slot - R;
      this.#wordOf[slot] = (slot < R ? 0 : requiredWords) + (index >>> 5);
      this.#maskOf[slot] = 1 << (index & 31);
    }
    this.#fullWord = new Uint32Array(requiredWords).fill(0xffffffff);
    if (R % 32 !== 0) this.#fullWord[requiredWords - 1] = (2 ** (R % 32) - 1) >>> 0;
    this.#zobrist = new Int32Array(n);
    let seed = 0x2545f491;
    // Optional slots hash to 0: the cache groups configurations by the completed ops placed and the state.
    for (let i = 0; i < R; i++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      this.#zobrist[i] = seed;
    }
    this.#twin = new Int32Array(n).fill(-1);
    const lastOfKind = new Map<string, number>();
    for (let slot = layout.required; slot < n; slot++) {
      const kind = canonicalJson(this.prepared[slot]);
      this.#twin[slot] = lastOfKind.get(kind) ?? -1;
      lastOfKind.set(kind, slot);
    }
    this.#unreachable = model.unreachable?.(layout.ops, this.prepared);
    this.#readOnly = new Uint8Array(n);
    if (model.readOnly !== undefined) {
      for (let slot = 0; slot < layout.required; slot++)
        this.#readOnly[slot] = model.readOnly(this.prepared[slot]) ? 1 : 0;
    }
    this.#reusable = options.reusable ?? new Uint8Array(n);
    const depth = options.reusable !== undefined ? n + 64 : n;
    this.#stackSlot = new Int32Array(depth);
    this.#stackState = new Int32Array(depth);
    this.#stackForced = new Uint8Array(depth);
    this.#stackLimit = new Float64Array(depth);
    this.#stackBase = new Int32Array(depth);
    this.#redundant = options.redundant ?? true;
    this.states = new StateTable(model);
    this.#current = this.states.intern(model.init());
    this.#entry = layout.next[layout.head] as number;
    if (layout.required === 0) {
      this.#status = 'ok';
      this.linearization = new Int32Array(0);
    }
  }

  /** The slots placed at the deepest point so far (outside `run`). */
  get bestPath(): Int32Array {
    if (this.#atBest) {
      this.#bestPath = this.#stackSlot.slice(0, this.#sp);
      this.#atBest = false;
    }
    return this.#bestPath;
  }

  get status(): SearchStatus {
    return this.#status;
  }

  /** Bytes held by the cache and states (the memory budget's measure). */
  get bytes(): number {
    return this.cache.peakBytes + this.states.bytes + this.#layout.ops.length * 64;
  }

  #save(
    status: SearchStatus,
    low: number,
    high: number,
    sp: number,
    phase: number,
    entry: number,
    limit: number,
    current: number,
    placed: number,
    hash: number,
    steps: number,
  ): SearchStatus {
    this.#low = low;
    this.#high = high;
    this.#sp = sp;
    this.#phase = phase;
    this.#entry = entry;
    this.#limit = limit;
    this.#current = current;
    this.#placed = placed;
    this.#hash = hash;
    this.steps = steps;
    this.#status = status;
    return status;
  }

  #growStack(): void {
    const length = this.#stackSlot.length * 2;
    const grow = <T extends Int32Array | Uint8Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const grown = make(length);
      grown.set(old as never);
      return grown;
    };
    this.#stackSlot = grow(this.#stackSlot, (k) => new Int32Array(k));
    this.#stackState = grow(this.#stackState, (k) => new Int32Array(k));
    this.#stackForced = grow(this.#stackForced, (k) => new Uint8Array(k));
    this.#stackLimit = grow(this.#stackLimit, (k) => new Float64Array(k));
    this.#stackBase = grow(this.#stackBase, (k) => new Int32Array(k));
  }

  /** Would `state` (after placing `slot`) leave some other unplaced completed op unreachable? */
  #strands(state: unknown, slot: number): boolean {
    const unreachable = this.#unreachable;
    if (unreachable === undefined) return false;
    for (const watched of unreachable.watch) {
      if (watched === slot || this.#isPlaced(watched)) continue;
      if (unreachable.test(state, watched, this.#isPlaced)) return true;
    }
    return false;
  }

  /** Searches until decided, `deadline` (performance.now() ms) passes, or the memory budget is exceeded. */
  run(deadline: number, memoryBytes: number): SearchStatus {
    if (this.#status !== 'running') return this.#status;
    const { next, prev, head, optNext, optPrev, optHead, call, ret, required: R } = this.#layout;
    const n = this.#layout.ops.length;
    const model = this.#model;
    const prepared = this.prepared;
    const stateList = this.states.states;
    const states = this.states;
    const cache = this.cache;
    const bits = this.#bits;
    const zobrist = this.#zobrist;
    const twin = this.#twin;
    const readOnly = this.#readOnly;
    const wordOf = this.#wordOf;
    const maskOf = this.#maskOf;
    const fullWord = this.#fullWord;
    const requiredWords = this.#requiredWords;
    let low = this.#low;
    let high = this.#high;
    const unreachable = this.#unreachable;
    let stackSlot = this.#stackSlot;
    let stackState = this.#stackState;
    let stackForced = this.#stackForced;
    let stackLimit = this.#stackLimit;
    let stackBase = this.#stackBase;
    const redundant = this.#redundant;
    const reusable = this.#reusable;
    let sp = this.#sp;
    let phase = this.#phase;
    let entry = this.#entry;
    let limit = this.#limit;
    let current = this.#current;
    let placed = this.#placed;
    let hash = this.#hash;
    let steps = this.steps;
    let iterations = 0;

    for (;;) {
      if ((++iterations & 1023) === 0) {
        if (performance.now() > deadline)
          return this.#save('running', low, high, sp, phase, entry, limit, current, placed, hash, steps);
        if (this.bytes > memoryBytes)
          return this.#save(
            'out-of-memory',
            low,
            high,
            sp,
            phase,
            entry,
            limit,
            current,
            placed,
            hash,
            steps,
          );
      }
      let backtrack = false;
      let slot = entry;
      if (phase === REQUIRED_PHASE) {
        if (entry >= n) {
          // The first unplaced return: nothing called after it may go next. Try optional ops called before it.
          limit = ret[entry] as number;
          phase = OPTIONAL_PHASE;
          entry = optNext[optHead] as number;
          continue;
        }
        backtrack = entry === -1;
      } else if (entry === -1 || (call[entry] as number) > limit) {
        backtrack = true;
      } else {
        const t = twin[entry] as number;
        if (t !== -1 && ((bits[wordOf[t] as number] as number) & (maskOf[t] as number)) === 0) {
          entry = optNext[entry] as number;
          continue;
        }
      }
      if (!backtrack) {
        const isRequired = slot < R;
        const result = model.step(stateList[current], prepared[slot]);
        steps++;
        if (result instanceof Inconsistent) {
          entry = isRequired ? (next[entry] as number) : (optNext[entry] as number);
          continue;
        }
        const sid = states.intern(result);
        if (sid === current && !isRequired) {
          entry = optNext[entry] as number;
          continue;
        }
        if (unreachable !== undefined && sid !== current && this.#strands(result, slot)) {
          entry = isRequired ? (next[entry] as number) : (optNext[entry] as number);
          continue;
        }
        // Right after a run of optional ops: if this op does the same from the state before that run,
        // the run was useless here, and the configuration without it (fewer optional ops used, reached
        // from an ancestor on the stack) subsumes this one.
        if (redundant && sp > 0 && (stackSlot[sp - 1] as number) >= R) {
          const base = stackBase[sp - 1] as number;
          const direct = model.step(stateList[base], prepared[slot]);
          steps++;
          if (!(direct instanceof Inconsistent) && states.intern(direct) === sid) {
            entry = isRequired ? (next[entry] as number) : (optNext[entry] as number);
            continue;
          }
        }
        const word = wordOf[slot] as number;
        const mask = reusable[slot] === 1 ? 0 : (maskOf[slot] as number);
        bits[word] = (bits[word] as number) | mask;
        hash ^= zobrist[slot] as number;
        const oldLow = low;
        const oldHigh = high;
        if (isRequired) {
          if (word >= high) high = word + 1;
          while (low < requiredWords && bits[low] === fullWord[low]) low++;
        }
        if (cache.add(mix(hash, sid), sid, bits, low, high)) {
          if (sp === stackSlot.length) {
            this.#growStack();
            stackSlot = this.#stackSlot;
            stackState = this.#stackState;
            stackForced = this.#stackForced;
            stackLimit = this.#stackLimit;
            stackBase = this.#stackBase;
          }
          stackSlot[sp] = slot;
          stackState[sp] = current;
          stackForced[sp] = readOnly[slot] as number;
          stackLimit[sp] = limit;
          stackBase[sp] =
            !isRequired && sp > 0 && (stackSlot[sp - 1] as number) >= R
              ? (stackBase[sp - 1] as number)
              : current;
          sp++;
          current = sid;
          if (isRequired) {
            next[prev[slot] as number] = next[slot] as number;
            prev[next[slot] as number] = prev[slot] as number; // a call entry is always followed by its return
            const r = n + slot;
            next[prev[r] as number] = next[r] as number;
            if ((next[r] as number) !== -1) prev[next[r] as number] = prev[r] as number;
            placed++;
            if (placed > this.bestDepth) {
              this.bestDepth = placed;
              this.#atBest = true; // copied lazily, when the search first backs out of it
            }
            if (placed === R) {
              this.linearization = stackSlot.slice(0, sp);
              return this.#save('ok', low, high, sp, phase, entry, limit, current, placed, hash, steps);
            }
          } else if (reusable[slot] === 0) {
            optNext[optPrev[slot] as number] = optNext[slot] as number;
            if ((optNext[slot] as number) !== -1) optPrev[optNext[slot] as number] = optPrev[slot] as number;
          }
          phase = REQUIRED_PHASE;
          entry = next[head] as number;
          continue;
        }
        bits[word] = (bits[word] as number) & ~mask;
        hash ^= zobrist[slot] as number;
        low = oldLow;
        high = oldHigh;
        if (readOnly[slot] === 0) {
          entry = isRequired ? (next[entry] as number) : (optNext[entry] as number);
          continue;
        }
        // A greedy read-only op leads only to explored ground: this configuration is exhausted.
      }
      // Backtrack: undo placements until one that had alternatives (a non-forced one).
      for (;;) {
        if (this.#atBest) {
          this.#bestPath = stackSlot.slice(0, sp);
          this.#atBest = false;
        }
        if (sp === 0)
          return this.#save('illegal', low, high, sp, phase, entry, limit, current, placed, hash, steps);
        sp--;
        slot = stackSlot[sp] as number;
        current = stackState[sp] as number;
        const word = wordOf[slot] as number;
        bits[word] = (bits[word] as number) & ~(maskOf[slot] as number);
        hash ^= zobrist[slot] as number;
        if (slot < R) {
          if (word < low) low = word;
          if (word + 1 === high) while (high > low && bits[high - 1] === 0) high--;
          placed--;
          const r = n + slot;
          next[prev[r] as number] = r;
          if ((next[r] as number) !== -1) prev[next[r] as number] = r;
          next[prev[slot] as number] = slot;
          prev[next[slot] as number] = slot;
        } else if (reusable[slot] === 0) {
          optNext[optPrev[slot] as number] = slot;
          if ((optNext[slot] as number) !== -1) optPrev[optNext[slot] as number] = slot;
        }
        if (stackForced[sp] === 0) {
          if (slot < R) {
            phase = REQUIRED_PHASE;
            entry = next[slot] as number;
          } else {
            phase = OPTIONAL_PHASE;
            entry = optNext[slot] as number;
            limit = stackLimit[sp] as number;
          }
          break;
        }
      }
    }
  }
}

/** Combines the bitset hash with the state id; MurmurHash3's finalizer spreads the low bits. */
function mix(bitsHash: number, state: number): number {
  let h = bitsHash ^ Math.imul(state + 1, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/**
 * Turns a relaxed search's linearization (an optional op may appear several times: each use stands
 * for some op of the same effect) into a real one: the uses of each kind, in order, get that kind's
 * ops in call order, each of which must have been called before every completed op placed after it
 * returned. Greedy is exact here: the bound only rises along the sequence and earlier calls fit more.
 * Returns undefined when the uses cannot all get distinct ops, adding the slots of each kind that
 * ran short to `overused`; with `prefix`, the longest prefix that can (for witnesses).
 */
export function realizeLinearization(
  layout: SearchLayout,
  prepared: readonly unknown[],
  relaxed: Int32Array,
  prefix = false,
  overused?: Set<number>,
): Int32Array | undefined {
  const { ops, required: R } = layout;
  const kindOf = new Map<string, number[]>();
  const kindOfSlot = new Map<number, number[]>();
  for (let slot = R; slot < ops.length; slot++) {
    const kind = canonicalJson(prepared[slot]);
    let list = kindOf.get(kind);
    if (list === undefined) {
      list = [];
      kindOf.set(kind, list);
    }
    list.push(slot); // slots are in call order
    kindOfSlot.set(slot, list);
  }
  // The earliest return among the completed ops placed after each position.
  const minRetAfter = new Float64Array(relaxed.length + 1).fill(Number.POSITIVE_INFINITY);
  for (let i = relaxed.length - 1; i >= 0; i--) {
    const slot = relaxed[i] as number;
    const ret = slot < R ? (ops[slot] as Operation).ret : Number.POSITIVE_INFINITY;
    minRetAfter[i] = Math.min(ret, minRetAfter[i + 1] as number);
  }
  const used = new Map<number[], number>();
  const out = new Int32Array(relaxed.length);
  let failed = false;
  for (let i = 0; i < relaxed.length; i++) {
    const slot = relaxed[i] as number;
    if (slot < R) {
      out[i] = slot;
      continue;
    }
    const list = kindOfSlot.get(slot) as number[];
    const k = used.get(list) ?? 0;
    const real = list[k];
    if (real === undefined || (ops[real] as Operation).call > (minRetAfter[i + 1] as number)) {
      if (prefix) return out.slice(0, i);
      if (overused === undefined) return undefined;
      for (const twin of list) overused.add(twin);
      failed = true;
      continue;
    }
    used.set(list, k + 1);
    out[i] = real;
  }
  return failed ? undefined : out;
}
