/**
 * The set of search configurations already explored: (linearized ops as a bitset, state id), as in
 * porcupine. Open addressing over typed arrays, so a lookup allocates nothing; the caller passes a
 * hash it maintains incrementally, so the bitset is only read on a hash match.
 */
export class ConfigCache {
  #slots: Int32Array;
  #mask: number;
  #count = 0;
  #capacity: number;
  #hash: Int32Array;
  #state: Int32Array;
  #bits: Uint32Array;

  constructor(
    private readonly words: number,
    initialSlots = 1 << 10,
  ) {
    this.#slots = new Int32Array(initialSlots);
    this.#mask = initialSlots - 1;
    this.#capacity = initialSlots >> 1;
    this.#hash = new Int32Array(this.#capacity);
    this.#state = new Int32Array(this.#capacity);
    this.#bits = new Uint32Array(this.#capacity * words);
  }

  /** Configurations recorded. */
  get size(): number {
    return this.#count;
  }

  /** Bytes held, counting the next growth's old and new arrays side by side once it is near. */
  get peakBytes(): number {
    const bytes =
      this.#slots.byteLength + this.#hash.byteLength + this.#state.byteLength + this.#bits.byteLength;
    return this.#count * 8 >= this.#capacity * 7 ? bytes * 3 : bytes;
  }

  /** Records (bits, state) and returns true, or returns false if it was already explored. */
  add(hash: number, state: number, bits: Uint32Array): boolean {
    const slots = this.#slots;
    const mask = this.#mask;
    const stored = this.#bits;
    const W = this.words;
    let i = hash & mask;
    for (;;) {
      const e = slots[i] as number;
      if (e === 0) break;
      const entry = e - 1;
      if (this.#hash[entry] === hash && this.#state[entry] === state) {
        const base = entry * W;
        let w = 0;
        while (w < W && stored[base + w] === bits[w]) w++;
        if (w === W) return false;
      }
      i = (i + 1) & mask;
    }
    if (this.#count >= this.#capacity) {
      this.#grow();
      i = hash & this.#mask;
      while (this.#slots[i] !== 0) i = (i + 1) & this.#mask;
    }
    const entry = this.#count++;
    this.#slots[i] = entry + 1;
    this.#hash[entry] = hash;
    this.#state[entry] = state;
    const base = entry * W;
    for (let w = 0; w < W; w++) this.#bits[base + w] = bits[w] as number;
    return true;
  }

  #grow(): void {
    const slotsLength = this.#slots.length * 2;
    this.#capacity = slotsLength >> 1;
    const hash = new Int32Array(this.#capacity);
    hash.set(this.#hash);
    this.#hash = hash;
    const state = new Int32Array(this.#capacity);
    state.set(this.#state);
    this.#state = state;
    const bits = new Uint32Array(this.#capacity * this.words);
    bits.set(this.#bits);
    this.#bits = bits;
    this.#slots = new Int32Array(slotsLength);
    this.#mask = slotsLength - 1;
    for (let entry = 0; entry < this.#count; entry++) {
      let i = (this.#hash[entry] as number) & this.#mask;
      while (this.#slots[i] !== 0) i = (i + 1) & this.#mask;
      this.#slots[i] = entry + 1;
    }
  }
}
