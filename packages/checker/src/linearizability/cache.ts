/**
 * The set of search configurations already explored: (linearized ops as a bitset, state id), as in
 * porcupine. Open addressing over typed arrays, so a lookup allocates nothing; the caller passes a
 * hash it maintains incrementally, so the stored bits are only read on a hash match.
 *
 * Only a window of the bitset is stored: in a long history the completed ops below some word are all
 * placed and those above some word none, so a configuration is (first non-full word `low`, the words
 * `[low, high)`, and the words of the optional ops `[optionalFrom, words)`). An entry costs a few words
 * whatever the history's length, instead of one bit per op.
 */
export class ConfigCache {
  #slots: Int32Array;
  #mask: number;
  #count = 0;
  #capacity: number;
  #hash: Int32Array;
  #state: Int32Array;
  #low: Int32Array;
  #offset: Int32Array;
  #length: Int32Array;
  #arena: Uint32Array;
  #arenaUsed = 0;

  constructor(
    private readonly optionalFrom: number,
    private readonly words: number,
    initialSlots = 64,
  ) {
    this.#slots = new Int32Array(initialSlots);
    this.#mask = initialSlots - 1;
    this.#capacity = initialSlots >> 1;
    this.#hash = new Int32Array(this.#capacity);
    this.#state = new Int32Array(this.#capacity);
    this.#low = new Int32Array(this.#capacity);
    this.#offset = new Int32Array(this.#capacity);
    this.#length = new Int32Array(this.#capacity);
    this.#arena = new Uint32Array(this.#capacity * 4); // small: a check may hold thousands of partitions at once
  }

  /** Configurations recorded. */
  get size(): number {
    return this.#count;
  }

  /** Bytes held, counting the next growth's old and new arrays side by side once it is near. */
  get peakBytes(): number {
    const index = this.#slots.byteLength + this.#capacity * 20;
    const near = this.#count * 8 >= this.#capacity * 7 || this.#arenaUsed * 8 >= this.#arena.length * 7;
    return near ? (index + this.#arena.byteLength) * 3 : index + this.#arena.byteLength;
  }

  /**
   * Records the configuration and returns true, or returns false if it was already explored. `bits`
   * is the whole bitset; words below `low` must be full and words in `[high, optionalFrom)` empty.
   */
  add(hash: number, state: number, bits: Uint32Array, low: number, high: number): boolean {
    const slots = this.#slots;
    const mask = this.#mask;
    const arena = this.#arena;
    const optionalFrom = this.optionalFrom;
    const W = this.words;
    const length = high - low + (W - optionalFrom);
    let i = hash & mask;
    for (;;) {
      const e = slots[i] as number;
      if (e === 0) break;
      const entry = e - 1;
      if (
        this.#hash[entry] === hash &&
        this.#state[entry] === state &&
        this.#low[entry] === low &&
        this.#length[entry] === length
      ) {
        let at = this.#offset[entry] as number;
        let same = true;
        for (let w = low; w < high && same; w++) same = arena[at++] === bits[w];
        for (let w = optionalFrom; w < W && same; w++) same = arena[at++] === bits[w];
        if (same) return false;
      }
      i = (i + 1) & mask;
    }
    if (this.#count >= this.#capacity) {
      this.#grow();
      i = hash & this.#mask;
      while (this.#slots[i] !== 0) i = (i + 1) & this.#mask;
    }
    if (this.#arenaUsed + length > this.#arena.length) {
      const arenaGrown = new Uint32Array(Math.max(this.#arena.length * 2, this.#arenaUsed + length));
      arenaGrown.set(this.#arena.subarray(0, this.#arenaUsed));
      this.#arena = arenaGrown;
    }
    const entry = this.#count++;
    this.#slots[i] = entry + 1;
    this.#hash[entry] = hash;
    this.#state[entry] = state;
    this.#low[entry] = low;
    this.#length[entry] = length;
    this.#offset[entry] = this.#arenaUsed;
    const out = this.#arena;
    let at = this.#arenaUsed;
    for (let w = low; w < high; w++) out[at++] = bits[w] as number;
    for (let w = optionalFrom; w < W; w++) out[at++] = bits[w] as number;
    this.#arenaUsed = at;
    return true;
  }

  #grow(): void {
    const slotsLength = this.#slots.length * 2;
    const capacity = slotsLength >> 1;
    const widen = (old: Int32Array): Int32Array => {
      const grown = new Int32Array(capacity);
      grown.set(old);
      return grown;
    };
    this.#capacity = capacity;
    this.#hash = widen(this.#hash);
    this.#state = widen(this.#state);
    this.#low = widen(this.#low);
    this.#offset = widen(this.#offset);
    this.#length = widen(this.#length);
    this.#slots = new Int32Array(slotsLength);
    this.#mask = slotsLength - 1;
    for (let entry = 0; entry < this.#count; entry++) {
      let i = (this.#hash[entry] as number) & this.#mask;
      while (this.#slots[i] !== 0) i = (i + 1) & this.#mask;
      this.#slots[i] = entry + 1;
    }
  }
}
