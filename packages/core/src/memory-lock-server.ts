import { monotonicNow } from './clock.js';

/** What the in-memory "backend" granted: the owner token, its fence and when the grant expires. */
export interface MemoryGrant {
  readonly owner: string;
  readonly fence: bigint;
  /** `monotonicNow()` at the grant; expiry is counted from here. */
  readonly grantedAt: number;
  readonly expiresAt: number;
}

/** How a release ended on the server. */
export type MemoryReleaseOutcome = 'released' | 'already-free' | 'held-by-other';

interface Waiter {
  readonly owner: string;
  readonly ttlMs: number;
  readonly onGrant: (grant: MemoryGrant) => void;
}

interface ResourceState {
  holder: MemoryGrant | undefined;
  expiryTimer: NodeJS.Timeout | undefined;
  /** FIFO: granted strictly in arrival order. */
  readonly waiters: Waiter[];
}

/**
 * The in-memory lock "server": the state a real backend keeps, for one process. It grants each
 * resource to one owner at a time, queues waiters in arrival order and hands over on release or
 * expiry without polling, issues a fence per resource that grows with every grant, and expires
 * grants by timer. Clients share a server the way processes share Redis; each client adds owner
 * tokens, waits and cancellation on top (see `MemoryLockClient`).
 */
export class MemoryLockServer {
  readonly #resources = new Map<string, ResourceState>();
  /**
   * Last fence issued per resource. Kept after the resource goes idle, so fences never repeat:
   * this map grows with the number of distinct resources ever locked (fine for one process).
   */
  readonly #fences = new Map<string, bigint>();

  /** Grants the lock if nobody holds it (and nobody waits); otherwise `null`. */
  tryGrant(resource: string, owner: string, ttlMs: number): MemoryGrant | null {
    const state = this.#state(resource);
    if (state.holder !== undefined || state.waiters.length > 0) return null;
    return this.#grant(resource, state, owner, ttlMs);
  }

  /**
   * Queues `owner`; `onGrant` runs synchronously when the lock is handed over. Returns a cancel
   * function that withdraws the waiter and returns `true`, or returns `false` if it was already
   * granted (the caller then owns a grant it must release).
   */
  enqueue(
    resource: string,
    owner: string,
    ttlMs: number,
    onGrant: (grant: MemoryGrant) => void,
  ): () => boolean {
    const state = this.#state(resource);
    const waiter: Waiter = { owner, ttlMs, onGrant };
    state.waiters.push(waiter);
    this.#handOver(resource, state);
    return () => {
      const index = state.waiters.indexOf(waiter);
      if (index < 0) return false;
      state.waiters.splice(index, 1);
      this.#forgetIfIdle(resource, state);
      return true;
    };
  }

  /** Re-arms `owner`'s grant for `ttlMs` from now; `null` if `owner` no longer holds the lock. */
  extend(resource: string, owner: string, ttlMs: number): MemoryGrant | null {
    const state = this.#resources.get(resource);
    if (state?.holder?.owner !== owner) return null;
    const now = monotonicNow();
    state.holder = { ...state.holder, expiresAt: now + ttlMs };
    this.#armExpiry(resource, state, ttlMs);
    return state.holder;
  }

  /** Deletes `owner`'s grant and hands the lock to the next waiter. Never touches another holder. */
  release(resource: string, owner: string): MemoryReleaseOutcome {
    const state = this.#resources.get(resource);
    if (state?.holder === undefined) return 'already-free';
    if (state.holder.owner !== owner) return 'held-by-other';
    this.#free(resource, state);
    return 'released';
  }

  /** The current grant on `resource`, or `null` when free. For tests, demos and diagnostics. */
  holder(resource: string): MemoryGrant | null {
    return this.#resources.get(resource)?.holder ?? null;
  }

  /** Resources currently held or waited for. */
  get activeResources(): number {
    return this.#resources.size;
  }

  #state(resource: string): ResourceState {
    let state = this.#resources.get(resource);
    if (!state) {
      state = { holder: undefined, expiryTimer: undefined, waiters: [] };
      this.#resources.set(resource, state);
    }
    return state;
  }

  #grant(resource: string, state: ResourceState, owner: string, ttlMs: number): MemoryGrant {
    const fence = (this.#fences.get(resource) ?? 0n) + 1n;
    this.#fences.set(resource, fence);
    const grantedAt = monotonicNow();
    state.holder = { owner, fence, grantedAt, expiresAt: grantedAt + ttlMs };
    this.#armExpiry(resource, state, ttlMs);
    return state.holder;
  }

  #armExpiry(resource: string, state: ResourceState, ttlMs: number): void {
    if (state.expiryTimer !== undefined) clearTimeout(state.expiryTimer);
    state.expiryTimer = setTimeout(() => {
      state.expiryTimer = undefined;
      const left = (state.holder?.expiresAt ?? 0) - monotonicNow();
      // Node timers may fire up to a millisecond early on performance.now(); expiring early would
      // free the lock while its holder's lease is still valid, so wait out the remainder.
      if (left > 0) this.#armExpiry(resource, state, left);
      else this.#free(resource, state);
    }, ttlMs);
    // The server is a data structure, not a service: it must not keep an idle process alive.
    state.expiryTimer.unref();
  }

  #free(resource: string, state: ResourceState): void {
    if (state.expiryTimer !== undefined) clearTimeout(state.expiryTimer);
    state.expiryTimer = undefined;
    state.holder = undefined;
    this.#handOver(resource, state);
  }

  #handOver(resource: string, state: ResourceState): void {
    if (state.holder !== undefined) return;
    const next = state.waiters.shift();
    if (next === undefined) {
      this.#forgetIfIdle(resource, state);
      return;
    }
    next.onGrant(this.#grant(resource, state, next.owner, next.ttlMs));
  }

  #forgetIfIdle(resource: string, state: ResourceState): void {
    if (state.holder === undefined && state.waiters.length === 0) this.#resources.delete(resource);
  }
}
