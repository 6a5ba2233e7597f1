import type { Etcd3, IKeyValue, Watcher } from 'etcd3';

/** Deletions a watch keeps for waiters that attach after they were delivered. */
const KEPT = 512;

/** A watch nobody listens to stays open this long, for the client's next waiter. */
const LINGER_MS = 5_000;

export interface DeleteListener {
  onDelete(kv: IKeyValue): void;
  /** The watch ended (compacted, cancelled by etcd): re-read, and attach again. */
  onBroken(): void;
}

interface SharedWatch {
  readonly watcher: Watcher;
  readonly listeners: Set<DeleteListener>;
  /** Deletions delivered, oldest first, at most `KEPT`. */
  readonly kept: IKeyValue[];
  /** Every deletion from this revision on has been kept or is still to come; unknown until created. */
  coveredFrom: bigint | undefined;
  readonly created: Promise<void>;
  linger: ReturnType<typeof setTimeout> | undefined;
}

/**
 * One deletions-only watch per permit prefix and client, kept open while the client's waiters use it
 * (and `LINGER_MS` after), as the floor keeps its watch: a waiter's own watch starting at the revision
 * it read lands, under contention, in etcd's "unsynced" group, caught up only every 100 ms, which put
 * up to 100 ms on a hand-off, and costs a create and a cancel per wait. A waiter that attaches gets
 * the deletions after its revision that were delivered already (kept), then the new ones; when the
 * watch cannot vouch for all of them (it was created after that revision, or dropped some it kept)
 * the waiter re-reads. etcd3 re-creates a watch after a reconnect from its last revision, so it has
 * no gap while it lives.
 */
export class PrefixWatches {
  readonly #etcd: Etcd3;
  readonly #watches = new Map<string, SharedWatch>();
  #closed = false;

  constructor(etcd: Etcd3) {
    this.#etcd = etcd;
  }

  /**
   * Listens to deletions under `prefix` after revision `asOf` (the kept ones first, at once).
   * `covered` resolves true once every such deletion is sure to reach the listener, false when the
   * caller must re-read to learn those the watch cannot vouch for.
   */
  attach(
    prefix: string,
    asOf: bigint,
    listener: DeleteListener,
  ): { covered: Promise<boolean>; detach(): void } {
    if (this.#closed) {
      queueMicrotask(() => listener.onBroken());
      return { covered: Promise.resolve(false), detach: () => {} };
    }
    const watch = this.#watches.get(prefix) ?? this.#open(prefix);
    clearTimeout(watch.linger);
    watch.linger = undefined;
    for (const kv of watch.kept) {
      if (BigInt(kv.mod_revision) > asOf) listener.onDelete(kv);
    }
    watch.listeners.add(listener);
    const covered = watch.created.then(
      () => watch.coveredFrom !== undefined && watch.coveredFrom <= asOf + 1n,
      () => false,
    );
    let attached = true;
    return {
      covered,
      detach: () => {
        if (!attached) return;
        attached = false;
        watch.listeners.delete(listener);
        if (watch.listeners.size > 0 || this.#watches.get(prefix) !== watch) return;
        watch.linger = setTimeout(() => this.#drop(prefix, watch), LINGER_MS);
        // Like the sessions' timers: a lingering watch must not keep a process alive.
        watch.linger.unref();
      },
    };
  }

  /** Cancels every watch (the client closes). */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#watches.entries()];
    await Promise.allSettled(all.map(([prefix, watch]) => this.#drop(prefix, watch)));
  }

  #open(prefix: string): SharedWatch {
    // `only('delete')`, not `ignore('put')`: etcd3 1.1's ignore() is an alias of only().
    const watcher = this.#etcd.watch().prefix(prefix).only('delete').watcher();
    let created!: () => void;
    let failed!: (error: unknown) => void;
    const watch: SharedWatch = {
      watcher,
      listeners: new Set(),
      kept: [],
      coveredFrom: undefined,
      created: new Promise<void>((resolve, reject) => {
        created = resolve;
        failed = reject;
      }),
      linger: undefined,
    };
    watch.created.catch(() => {});
    this.#watches.set(prefix, watch);
    watcher.on('connected', (response) => {
      // A reconnect re-creates the watch from its last revision: only the first creation sets this.
      watch.coveredFrom ??= BigInt(response.header.revision) + 1n;
      created();
    });
    watcher.on('delete', (kv) => {
      watch.kept.push(kv);
      if (watch.kept.length > KEPT) {
        const dropped = watch.kept.shift() as IKeyValue;
        watch.coveredFrom = BigInt(dropped.mod_revision) + 1n;
      }
      for (const listener of watch.listeners) listener.onDelete(kv);
    });
    const broken = (error: unknown) => {
      failed(error);
      if (this.#watches.get(prefix) !== watch) return;
      void this.#drop(prefix, watch);
      for (const listener of watch.listeners) listener.onBroken();
    };
    watcher.on('error', broken);
    watcher.on('end', () => broken(new Error('the watch ended')));
    return watch;
  }

  async #drop(prefix: string, watch: SharedWatch): Promise<void> {
    clearTimeout(watch.linger);
    watch.linger = undefined;
    if (this.#watches.get(prefix) === watch) this.#watches.delete(prefix);
    await watch.watcher.cancel().catch(() => {});
  }
}
