import { InvalidArgumentError, StaleFenceError } from './errors.js';
import { assertResource } from './validate.js';

/** A stored value with the fence of the write that put it there. */
export interface FencedRecord<V> {
  readonly value: V;
  readonly fence: bigint;
}

/**
 * The resource side of fencing: a store that accepts a write only if its fence is above the highest
 * it has seen for that key, and refuses the rest with `StaleFenceError`. This, not the lock, is
 * what stops a holder that paused past its lease from overwriting its successor's work.
 *
 * Every grant gets a new fence, so by default a lease writes a key once; pass
 * `sameFence: 'accept'` where one holder must write the same key several times.
 */
export interface FencedResource<V> {
  /** Stores `value` under `key` if `fence` is above the highest fence seen for `key`. */
  write(key: string, value: V, fence: bigint): Promise<void>;
  /** The current value and its fence, or `undefined` if `key` was never written. */
  read(key: string): Promise<FencedRecord<V> | undefined>;
}

export interface FencedResourceOptions {
  /**
   * What a write carrying exactly the highest fence seen does: `'refuse'` (default: fences must
   * strictly increase, as the checker expects) or `'accept'` (the same holder writing again).
   */
  sameFence?: 'refuse' | 'accept';
}

/** Checks a write's key and fence; fences are non-negative bigints. */
export function assertFencedWrite(key: unknown, fence: unknown): asserts fence is bigint {
  assertResource(key);
  if (typeof fence !== 'bigint' || fence < 0n) {
    throw new InvalidArgumentError(
      'fence',
      fence,
      'a non-negative bigint (a lease from a backend with safe fences)',
    );
  }
}

export function assertSameFence(value: unknown): asserts value is 'refuse' | 'accept' | undefined {
  if (value !== undefined && value !== 'refuse' && value !== 'accept') {
    throw new InvalidArgumentError('sameFence', value, '"refuse" or "accept"');
  }
}

/** An in-memory `FencedResource` (one process): for tests, demos and the harness's resource model. */
export class MemoryFencedResource<V> implements FencedResource<V> {
  readonly #records = new Map<string, FencedRecord<V>>();
  readonly #acceptSame: boolean;

  constructor(options: FencedResourceOptions = {}) {
    assertSameFence(options.sameFence);
    this.#acceptSame = options.sameFence === 'accept';
  }

  async write(key: string, value: V, fence: bigint): Promise<void> {
    assertFencedWrite(key, fence);
    const current = this.#records.get(key);
    if (current && (fence < current.fence || (fence === current.fence && !this.#acceptSame))) {
      throw new StaleFenceError(key, fence, current.fence);
    }
    this.#records.set(key, { value, fence });
  }

  async read(key: string): Promise<FencedRecord<V> | undefined> {
    assertResource(key);
    return this.#records.get(key);
  }
}
