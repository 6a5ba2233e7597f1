/**
 * The configurations already explored, grouped by what the completed ops decide: a group is (the
 * completed ops placed, as a bitset window, state id), and holds the sets of optional ops (`info`:
 * outcome unknown) placed on each visit. Open addressing over typed arrays, so a lookup allocates
 * nothing; the caller passes a hash of the completed ops' bits it maintains incrementally.
 *
 * Subsumption: a configuration whose optional set is a superset of one already recorded in its group
 * is not explored again. From (placed completed ops S, state s, optional ops used O) every move
 * available from (S, s, O') with O' ⊇ O is available too, and leads to a configuration that again
 * uses no more optional ops (an optional op's enabling depends on S only): having more optional ops
 * left in hand can only help. So if (S, s, O) was explored (or is being explored further up the
 * stack), (S, s, O') cannot succeed where it did not. Porcupine's cache is the equality case.
 *
 * Only a window of the completed ops' bitset is stored: in a long history the completed ops below some
 * word are all placed and those above some word none, so a group is (first non-full word `low`, the
 * words `[low, high)`); an entry stores the optional words `[optionalFrom, words)`.
 */
export class ConfigCache {
  #slots: Int32Array;
  #mask: number;
  #groups = 0;
  #groupCapacity: number;
  #gHash: Int32Array;
  #gState: Int32Array;
  #gLow: Int32Array;
  #gOffset: Int32Array;
  #gLength: Int32Array;
  /** First entry of the group (index + 1; 0: none). */
  #gHead: Int32Array;
  #entries = 0;
  /** Entries unlinked as supersets of a later one (their arena words stay). */
  #unlinked = 0;
  #entryCapacity: number;
  /** Next entry in the same group (index + 1; 0: none). */
  #eNext: Int32Array;
  #eOffset: Int32Array;
  #arena: Uint32Array;
  #arenaUsed = 0;
  readonly #optionalWords: number;

  constructor(
    private readonly optionalFrom: number,
    private readonly words: number,
    initialSlots = 64,
    /** false: only an equal optional set counts as explored (porcupine's exact cache), for cross-checks. */
    private readonly subsume = true,
  ) {
    this.#optionalWords = words - optionalFrom;
    this.#slots = new Int32Array(initialSlots);
    this.#mask = initialSlots - 1;
    this.#groupCapacity = initialSlots >> 1;
    this.#gHash = new Int32Array(this.#groupCapacity);
    this.#gState = new Int32Array(this.#groupCapacity);
    this.#gLow = new Int32Array(this.#groupCapacity);
    this.#gOffset = new Int32Array(this.#groupCapacity);
    this.#gLength = new Int32Array(this.#groupCapacity);
    this.#gHead = new Int32Array(this.#groupCapacity);
    this.#entryCapacity = this.#optionalWords === 0 ? 0 : initialSlots >> 1;
    this.#eNext = new Int32Array(this.#entryCapacity);
    this.#eOffset = new Int32Array(this.#entryCapacity);
    this.#arena = new Uint32Array(this.#groupCapacity * 4); // small: a check may hold thousands of partitions at once
  }

  /** Configurations recorded and still in force (one per group when the partition has no optional ops). */
  get size(): number {
    return this.#optionalWords === 0 ? this.#groups : this.#entries - this.#unlinked;
  }

  /** Groups recorded: distinct (completed ops placed, state). */
  get groups(): number {
    return this.#groups;
  }

  /** Bytes held, counting the next growth's old and new arrays side by side once it is near. */
  get peakBytes(): number {
    const groupBytes = this.#slots.byteLength + this.#groupCapacity * 24;
    const entryBytes = this.#entryCapacity * 8;
    const near =
      this.#groups * 8 >= this.#groupCapacity * 7 ||
      this.#entries * 8 >= this.#entryCapacity * 7 ||
      this.#arenaUsed * 8 >= this.#arena.length * 7;
    const bytes = groupBytes + entryBytes + this.#arena.byteLength;
    return near ? bytes * 3 : bytes;
  }

  /**
   * Records the configuration and returns true, or returns false if it (or one it subsumes: same
   * completed ops and state, fewer optional ops) was already explored. `bits` is the whole bitset;
   * words below `low` must be full and words in `[high, optionalFrom)` empty. `hash` covers the
   * completed ops' bits and the state only.
   */
  add(hash: number, state: number, bits: Uint32Array, low: number, high: number): boolean {
    const slots = this.#slots;
    const mask = this.#mask;
    const length = high - low;
    let i = hash & mask;
    let group = -1;
    for (;;) {
      const e = slots[i] as number;
      if (e === 0) break;
      const g = e - 1;
      if (
        this.#gHash[g] === hash &&
        this.#gState[g] === state &&
        this.#gLow[g] === low &&
        this.#gLength[g] === length
      ) {
        const arena = this.#arena;
        let at = this.#gOffset[g] as number;
        let same = true;
        for (let w = low; w < high && same; w++) same = arena[at++] === bits[w];
        if (same) {
          group = g;
          break;
        }
      }
      i = (i + 1) & mask;
    }
    const optionalFrom = this.optionalFrom;
    const W = this.words;
    if (group !== -1) {
      if (this.#optionalWords === 0) return false;
      const arena = this.#arena;
      // Is some recorded optional set a subset of the current one? Recorded supersets of the current
      // one are unlinked on the way: the current set prunes all they pruned, so the group's list
      // stays an antichain and its scans short.
      let prev = 0;
      for (let e = this.#gHead[group] as number; e !== 0; ) {
        const at0 = this.#eOffset[e - 1] as number;
        const following = this.#eNext[e - 1] as number;
        let subset = true;
        let superset = this.subsume;
        if (this.subsume) {
          let at = at0;
          for (let w = optionalFrom; w < W && (subset || superset); w++) {
            const stored = arena[at++] as number;
            const current = bits[w] as number;
            if ((stored & ~current) !== 0) subset = false;
            if ((current & ~stored) !== 0) superset = false;
          }
        } else {
          let at = at0;
          for (let w = optionalFrom; w < W && subset; w++) subset = arena[at++] === bits[w];
        }
        if (subset) return false;
        if (superset) {
          if (prev === 0) this.#gHead[group] = following;
          else this.#eNext[prev - 1] = following;
          this.#unlinked++;
        } else prev = e;
        e = following;
      }
      this.#addEntry(group, bits);
      return true;
    }
    if (this.#groups >= this.#groupCapacity) {
      this.#grow();
      i = hash & this.#mask;
      while (this.#slots[i] !== 0) i = (i + 1) & this.#mask;
    }
    const g = this.#groups++;
    this.#slots[i] = g + 1;
    this.#gHash[g] = hash;
    this.#gState[g] = state;
    this.#gLow[g] = low;
    this.#gLength[g] = length;
    this.#gHead[g] = 0;
    this.#reserve(length);
    this.#gOffset[g] = this.#arenaUsed;
    const out = this.#arena;
    let at = this.#arenaUsed;
    for (let w = low; w < high; w++) out[at++] = bits[w] as number;
    this.#arenaUsed = at;
    if (this.#optionalWords !== 0) this.#addEntry(g, bits);
    return true;
  }

  #addEntry(group: number, bits: Uint32Array): void {
    if (this.#entries >= this.#entryCapacity) {
      const capacity = Math.max(32, this.#entryCapacity * 2);
      this.#eNext = widen(this.#eNext, capacity);
      this.#eOffset = widen(this.#eOffset, capacity);
      this.#entryCapacity = capacity;
    }
    this.#reserve(this.#optionalWords);
    const e = this.#entries++;
    this.#eOffset[e] = this.#arenaUsed;
    this.#eNext[e] = this.#gHead[group] as number;
    this.#gHead[group] = e + 1;
    const out = this.#arena;
    let at = this.#arenaUsed;
    for (let w = this.optionalFrom; w < this.words; w++) out[at++] = bits[w] as number;
    this.#arenaUsed = at;
  }

  #reserve(words: number): void {
    if (this.#arenaUsed + words > this.#arena.length) {
      const arenaGrown = new Uint32Array(Math.max(this.#arena.length * 2, this.#arenaUsed + words));
      arenaGrown.set(this.#arena.subarray(0, this.#arenaUsed));
      this.#arena = arenaGrown;
    }
  }

  #grow(): void {
    const slotsLength = this.#slots.length * 2;
    const capacity = slotsLength >> 1;
    this.#groupCapacity = capacity;
    this.#gHash = widen(this.#gHash, capacity);
    this.#gState = widen(this.#gState, capacity);
    this.#gLow = widen(this.#gLow, capacity);
    this.#gOffset = widen(this.#gOffset, capacity);
    this.#gLength = widen(this.#gLength, capacity);
    this.#gHead = widen(this.#gHead, capacity);
    this.#slots = new Int32Array(slotsLength);
    this.#mask = slotsLength - 1;
    for (let g = 0; g < this.#groups; g++) {
      let i = (this.#gHash[g] as number) & this.#mask;
      while (this.#slots[i] !== 0) i = (i + 1) & this.#mask;
      this.#slots[i] = g + 1;
    }
  }
}

function widen(old: Int32Array, capacity: number): Int32Array {
  const grown = new Int32Array(capacity);
  grown.set(old.subarray(0, Math.min(old.length, capacity)));
  return grown;
}
