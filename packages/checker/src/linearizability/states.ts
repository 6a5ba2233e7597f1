import type { AnyModel } from '../models/model.js';

/**
 * Interns model states as small integers, so the search compares and hashes states as ints. Primitive
 * states (numbers, strings, null…) go through a `Map`; object states through the model's hash and
 * equal.
 */
export class StateTable {
  readonly states: unknown[] = [];
  #primitive = new Map<unknown, number>();
  #byHash = new Map<number, number | number[]>();
  /** Rough bytes held, for the memory budget (strings count their length). */
  bytes = 0;

  constructor(private readonly model: AnyModel) {}

  intern(state: unknown): number {
    if (state === null || typeof state !== 'object') {
      const found = this.#primitive.get(state);
      if (found !== undefined) return found;
      const id = this.states.length;
      this.states.push(state);
      this.#primitive.set(state, id);
      this.bytes += 48 + (typeof state === 'string' ? state.length * 2 : 0);
      return id;
    }
    const { hash, equal } = this.model;
    if (hash === undefined || equal === undefined) {
      throw new TypeError(`model ${this.model.name} has object states but no hash/equal`);
    }
    const h = hash(state);
    const bucket = this.#byHash.get(h);
    if (bucket !== undefined) {
      if (typeof bucket === 'number') {
        if (equal(this.states[bucket], state)) return bucket;
      } else {
        for (const id of bucket) if (equal(this.states[id], state)) return id;
      }
    }
    const id = this.states.length;
    this.states.push(state);
    if (bucket === undefined) this.#byHash.set(h, id);
    else if (typeof bucket === 'number') this.#byHash.set(h, [bucket, id]);
    else bucket.push(id);
    this.bytes += 128;
    return id;
  }
}
