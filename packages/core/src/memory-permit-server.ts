import { monotonicNow } from './clock.js';
import { InvalidArgumentError } from './errors.js';

/** What the in-memory permit "server" granted. */
export interface PermitGrant {
  readonly owner: string;
  readonly weight: number;
  readonly fence: bigint;
  /** `monotonicNow()` at the grant; expiry is counted from here. */
  readonly grantedAt: number;
}

interface Holder {
  grant: PermitGrant;
  expiresAt: number;
  timer: NodeJS.Timeout | undefined;
}

interface PermitWaiter {
  readonly owner: string;
  readonly weight: number;
  readonly ttlMs: number;
  readonly onGrant: (grant: PermitGrant) => void;
}

interface PermitState {
  readonly limit: number;
  used: number;
  readonly holders: Map<string, Holder>;
  /** Strict FIFO: the head is granted first, and nobody passes it, even a request that would fit. */
  readonly waiters: PermitWaiter[];
}

/**
 * The in-memory reference of the permit engine behind semaphores and read-write locks: `limit` units
 * per key, each grant taking `weight` of them (a semaphore: its permits; a read-write lock: 1 per
 * reader, the whole limit per writer). Waiters are served strictly in arrival order, on release or
 * expiry, without polling; every grant raises the key's fence. Clients add owners, waits and
 * cancellation on top (`MemorySharedLockClient`).
 */
export class MemoryPermitServer {
  readonly #states = new Map<string, PermitState>();
  /** Last fence per key, kept after the key goes idle so fences never repeat. */
  readonly #fences = new Map<string, bigint>();

  /** Grants at once if the weight fits and nobody waits; `null` otherwise. */
  tryGrant(key: string, limit: number, owner: string, weight: number, ttlMs: number): PermitGrant | null {
    const state = this.#state(key, limit);
    if (state.waiters.length > 0 || state.used + weight > limit) {
      this.#forgetIfIdle(key, state);
      return null;
    }
    return this.#grant(key, state, owner, weight, ttlMs);
  }

  /**
   * Queues `owner`; `onGrant` runs synchronously when its turn comes and its weight fits. Returns a
   * cancel function: `true` when the waiter was withdrawn, `false` when it had been granted already.
   */
  enqueue(
    key: string,
    limit: number,
    owner: string,
    weight: number,
    ttlMs: number,
    onGrant: (grant: PermitGrant) => void,
  ): () => boolean {
    const state = this.#state(key, limit);
    const waiter: PermitWaiter = { owner, weight, ttlMs, onGrant };
    state.waiters.push(waiter);
    this.#handOver(key, state);
    return () => {
      const index = state.waiters.indexOf(waiter);
      if (index < 0) return false;
      state.waiters.splice(index, 1);
      // A withdrawn head may have been what held smaller requests behind it back.
      this.#handOver(key, state);
      return true;
    };
  }

  /** Re-arms `owner`'s grant for `ttlMs` from now; false if it no longer holds one. */
  extend(key: string, owner: string, ttlMs: number): boolean {
    const state = this.#states.get(key);
    const holder = state?.holders.get(owner);
    if (state === undefined || holder === undefined) return false;
    holder.expiresAt = monotonicNow() + ttlMs;
    this.#armExpiry(key, state, holder, ttlMs);
    return true;
  }

  /** Gives `owner`'s units back and hands them on; false when its grant was already gone. */
  release(key: string, owner: string): boolean {
    const state = this.#states.get(key);
    const holder = state?.holders.get(owner);
    if (state === undefined || holder === undefined) return false;
    this.#free(key, state, holder);
    return true;
  }

  /** Units held on `key` right now (0 when idle). For tests and diagnostics. */
  used(key: string): number {
    return this.#states.get(key)?.used ?? 0;
  }

  /** Keys currently held or waited for. */
  get activeKeys(): number {
    return this.#states.size;
  }

  #state(key: string, limit: number): PermitState {
    let state = this.#states.get(key);
    if (state === undefined) {
      state = { limit, used: 0, holders: new Map(), waiters: [] };
      this.#states.set(key, state);
    } else if (state.limit !== limit) {
      throw new InvalidArgumentError(
        'permits',
        limit,
        `${state.limit}, the permit count the semaphore's current holders and waiters use`,
      );
    }
    return state;
  }

  #grant(key: string, state: PermitState, owner: string, weight: number, ttlMs: number): PermitGrant {
    const fence = (this.#fences.get(key) ?? 0n) + 1n;
    this.#fences.set(key, fence);
    const grantedAt = monotonicNow();
    const grant: PermitGrant = { owner, weight, fence, grantedAt };
    const holder: Holder = { grant, expiresAt: grantedAt + ttlMs, timer: undefined };
    state.holders.set(owner, holder);
    state.used += weight;
    this.#armExpiry(key, state, holder, ttlMs);
    return grant;
  }

  #armExpiry(key: string, state: PermitState, holder: Holder, ms: number): void {
    if (holder.timer !== undefined) clearTimeout(holder.timer);
    holder.timer = setTimeout(() => {
      holder.timer = undefined;
      const left = holder.expiresAt - monotonicNow();
      // Timers may fire a little early on performance.now(): never free units of a valid lease.
      if (left > 0) this.#armExpiry(key, state, holder, left);
      else this.#free(key, state, holder);
    }, ms);
    // A data structure, not a service: it must not keep an idle process alive.
    holder.timer.unref();
  }

  #free(key: string, state: PermitState, holder: Holder): void {
    if (holder.timer !== undefined) clearTimeout(holder.timer);
    holder.timer = undefined;
    if (state.holders.get(holder.grant.owner) !== holder) return;
    state.holders.delete(holder.grant.owner);
    state.used -= holder.grant.weight;
    this.#handOver(key, state);
  }

  #handOver(key: string, state: PermitState): void {
    for (;;) {
      const next = state.waiters[0];
      if (next === undefined || state.used + next.weight > state.limit) break;
      state.waiters.shift();
      next.onGrant(this.#grant(key, state, next.owner, next.weight, next.ttlMs));
    }
    this.#forgetIfIdle(key, state);
  }

  #forgetIfIdle(key: string, state: PermitState): void {
    if (state.holders.size === 0 && state.waiters.length === 0) this.#states.delete(key);
  }
}
