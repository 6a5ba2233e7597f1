import type { QueueEntry } from './queue.js';

/**
 * Lock nodes whose lease ended "unsure" (connection suspended). The node is kept, as Curator keeps
 * it: the session may well survive (a ZooKeeper leader change suspends every connection for a
 * moment), and then the lock is still ours and can be reclaimed with the same fence. A node nobody
 * reclaims or releases within one session timeout after the reconnect is deleted, so the lock is
 * never kept longer than a dead holder's would be.
 */
export class UnsureNodes {
  readonly #entries = new Map<string, { entry: QueueEntry; timer: NodeJS.Timeout | undefined }>();

  constructor(
    private readonly graceMs: () => number,
    private readonly giveUp: (entry: QueueEntry) => void,
  ) {}

  /**
   * Keeps `entry` for a reclaim. Its grace period starts at the next reconnect, or at once with
   * `connected` (the lease ended unsure while the connection still stood: no reconnect may follow).
   */
  add(entry: QueueEntry, connected = false): void {
    this.#entries.set(entry.path, { entry, timer: undefined });
    if (connected) this.#startGrace(entry.path);
  }

  has(path: string): boolean {
    return this.#entries.has(path);
  }

  /** Takes the entry out (reclaimed, released or gone); undefined if it was not unsure. */
  take(path: string): QueueEntry | undefined {
    const found = this.#entries.get(path);
    if (!found) return undefined;
    clearTimeout(found.timer);
    this.#entries.delete(path);
    return found.entry;
  }

  /** The same session answered again: start each node's grace period. */
  reconnected(generation: number): void {
    for (const [path, found] of this.#entries) {
      if (found.entry.generation === generation) this.#startGrace(path);
    }
  }

  #startGrace(path: string): void {
    const found = this.#entries.get(path);
    if (!found || found.timer !== undefined) return;
    found.timer = setTimeout(() => {
      const entry = this.take(path);
      if (entry) this.giveUp(entry);
    }, this.graceMs());
    found.timer.unref();
  }

  /**
   * The session expired: takes out and returns its entries. Their nodes are gone if the servers
   * expired it; if only this client did (suspended for a session timeout), they may remain.
   */
  expired(generation: number): QueueEntry[] {
    const gone: QueueEntry[] = [];
    for (const [path, found] of this.#entries) {
      if (found.entry.generation === generation && this.take(path)) gone.push(found.entry);
    }
    return gone;
  }

  /** Deletes every remaining node now (client closing). */
  drain(): QueueEntry[] {
    const entries = [...this.#entries.keys()].map((path) => this.take(path));
    return entries.filter((e): e is QueueEntry => e !== undefined);
  }
}
