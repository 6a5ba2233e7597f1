import type { LeaderInfo } from './contract.js';

/** A candidate waiting in, or leading, one election. */
export interface MemoryCandidacy {
  readonly candidate: string;
  /** Called synchronously when this candidacy becomes leader, with its term. */
  readonly onElected: (term: bigint) => void;
}

interface ElectionState {
  leader: (LeaderInfo & { readonly candidacy: MemoryCandidacy }) | undefined;
  /** FIFO: the longest-waiting candidate leads next. */
  readonly queue: MemoryCandidacy[];
  readonly watchers: Set<(leader: LeaderInfo | null) => void>;
}

/**
 * The in-memory election "server" for one process: per election, one leader at a time, candidates
 * elected in arrival order, a term that grows with every new leader, and change notifications for
 * observers. Participants (`MemoryElection`) share a hub the way servers share an etcd cluster.
 */
export class MemoryElectionHub {
  readonly #elections = new Map<string, ElectionState>();
  /** Last term per election, kept when the election goes idle so terms never repeat. */
  readonly #terms = new Map<string, bigint>();

  /** Queues a candidacy; returns a withdraw function that is `false` once it has been elected. */
  campaign(name: string, candidacy: MemoryCandidacy): () => boolean {
    const state = this.#state(name);
    state.queue.push(candidacy);
    this.#elect(name, state);
    return () => {
      const index = state.queue.indexOf(candidacy);
      if (index < 0) return false;
      state.queue.splice(index, 1);
      this.#forgetIfIdle(name, state);
      return true;
    };
  }

  /** Ends `candidacy`'s leadership (if it leads) and elects the next candidate. */
  resign(name: string, candidacy: MemoryCandidacy): boolean {
    const state = this.#elections.get(name);
    if (state?.leader?.candidacy !== candidacy) return false;
    state.leader = undefined;
    this.#elect(name, state);
    return true;
  }

  leader(name: string): LeaderInfo | null {
    const leader = this.#elections.get(name)?.leader;
    return leader ? { candidate: leader.candidate, term: leader.term } : null;
  }

  /** Calls `watcher` on every leader change of `name`; returns the unsubscribe function. */
  watch(name: string, watcher: (leader: LeaderInfo | null) => void): () => void {
    const state = this.#state(name);
    state.watchers.add(watcher);
    return () => {
      state.watchers.delete(watcher);
      this.#forgetIfIdle(name, state);
    };
  }

  #state(name: string): ElectionState {
    let state = this.#elections.get(name);
    if (!state) {
      state = { leader: undefined, queue: [], watchers: new Set() };
      this.#elections.set(name, state);
    }
    return state;
  }

  #elect(name: string, state: ElectionState): void {
    if (state.leader !== undefined) return;
    const next = state.queue.shift();
    if (next) {
      const term = (this.#terms.get(name) ?? 0n) + 1n;
      this.#terms.set(name, term);
      state.leader = { candidate: next.candidate, term, candidacy: next };
      next.onElected(term);
    }
    const info = this.leader(name);
    for (const watcher of [...state.watchers]) watcher(info);
    this.#forgetIfIdle(name, state);
  }

  #forgetIfIdle(name: string, state: ElectionState): void {
    if (state.leader === undefined && state.queue.length === 0 && state.watchers.size === 0) {
      this.#elections.delete(name);
    }
  }
}
