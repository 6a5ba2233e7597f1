import { monotonicNow, sleep } from '@fencekit/core';
import type { BackgroundWork } from './background.js';
import type { Created } from './create2.js';
import { entryPrefix, newOwner, queueOrder, sequenceOf } from './paths.js';
import type { ZkSession } from './session.js';
import { type Cancel, RETRY_PAUSE_MS, unlessAborted } from './wait-scope.js';
import { isUncertain, ZkCode, zkCode } from './zk-errors.js';
import { zxidOf } from './zxid.js';

const NODE_DELETED = 2;
const EPHEMERAL_SEQUENTIAL = 3;

/** One place in a queue: an ephemeral-sequential node owned by one session generation. */
export interface QueueEntry {
  readonly folder: string;
  readonly name: string;
  readonly path: string;
  readonly owner: string;
  readonly generation: number;
  /**
   * The node's creation zxid: the fence (lock) or term (election), from the create's reply. Undefined
   * when that reply was lost (the entry was found again by its name); then read before it is granted.
   */
  czxid: bigint | undefined;
  /**
   * The node's sequence number when it was known to be the only node in its folder (see
   * `SequentialQueue.join`), else undefined.
   */
  readonly soleAt: number | undefined;
}

export interface Joined {
  entry: QueueEntry;
  /**
   * Entry names in queue order as known right after the create: just ours when the entry is known to
   * be alone, the pipelined listing otherwise; empty when not known (the waiter lists the folder).
   */
  order: string[];
}

export interface Head {
  czxid: bigint;
}

/** The entry's node vanished (its session expired, or it was deleted): its place in the queue is gone. */
export class EntryGoneError extends Error {
  constructor(
    readonly entry: QueueEntry,
    readonly why: string,
  ) {
    super(`queue entry ${entry.path} is gone: ${why}`);
  }
}

/**
 * The mechanics shared by the lock and the election (Curator's split of mechanics from policy):
 * join a queue by creating a protected ephemeral-sequential node, find it again after a lost reply,
 * wait until it is the lowest while watching only its immediate predecessor, and leave.
 */
export class SequentialQueue {
  /**
   * Per folder: the sequence number our next create there gets if nobody else has created a node
   * there since we last deleted our node from it while it held nothing else (see `join`).
   */
  readonly #emptyAt = new Map<string, number>();

  /**
   * `background`: the owning client's tracker of background deletes, where a join given up while its
   * create was in flight withdraws the node that create may still make (close() bounds it).
   */
  constructor(
    private readonly session: ZkSession,
    private readonly kind: string,
    private readonly background: BackgroundWork,
  ) {}

  /**
   * Creates this attempt's node under `folder` (creating the folder on first use) with CREATE2, whose
   * reply carries the node's czxid: the fence or term needs no second request.
   *
   * Whether anybody else is queued is known without a read when the folder was empty after our last
   * delete there. ZooKeeper numbers the sequential children of a folder from a counter that every
   * create there moves forward (deletes do not move it in ZooKeeper 3.8: after create + delete the
   * next node gets the number after the first's; `test/wire.integration.test.ts` checks it, and if
   * deletes did move it the shortcut would simply never fire). So if our create gets exactly the
   * number after our last node's, nobody created anything there in between: the folder held only our
   * node, and the entry is the head at once, for one request, as cheap as a bare create. Any other
   * number (someone else created a node, or the counter jumped) costs a listing. Otherwise the
   * listing is pipelined behind the create (ZooKeeper answers one session's requests in order, so it
   * includes our node): it gives the order, and whether we are alone, which arms the shortcut.
   * The shortcut assumes fencekit's folders are not deleted and recreated while its clients run (a
   * new folder numbers from 0 again); nothing in fencekit deletes them.
   */
  async join(folder: string, data: Buffer | null, signal: Cancel): Promise<Joined> {
    const owner = newOwner();
    const prefix = `${folder}/${entryPrefix(owner, this.kind)}`;
    for (;;) {
      signal.throwIfAborted();
      // Bounded by the caller's wait (signal), not by one session timeout: a slow first connect is a wait.
      const generation = this.session.connected
        ? this.session.generation
        : await this.session.ready({ signal, timeoutMs: Number.POSITIVE_INFINITY });
      // Taken, not read: a second join running meanwhile must list (only one create can get it anyway).
      const expected = this.#emptyAt.get(folder);
      this.#emptyAt.delete(folder);
      const send = () => ({
        // Not bound to the signal: once sent, the create may be applied whatever the caller does, and
        // its node would head the queue for as long as the session lives. A caller that stops waiting
        // is answered at once; the create's outcome is awaited in the background, which deletes it.
        created: this.session.createWithStat(prefix, data, EPHEMERAL_SEQUENTIAL),
        listed: expected === undefined ? this.session.children(folder, undefined, { signal }) : undefined,
      });
      // Two requests leave in one socket write; one needs no corking.
      const { created, listed } = expected === undefined ? this.session.pipeline(send) : send();
      listed?.catch(() => {});
      let path: string;
      let czxid: bigint | undefined;
      try {
        const reply = await unlessAborted(created, signal);
        path = reply.path;
        czxid = zxidOf(reply.stat.czxid);
      } catch (error) {
        if (signal.aborted) {
          this.#withdrawLate(folder, owner, created);
          throw signal.reason;
        }
        if (zkCode(error) === ZkCode.NO_NODE) {
          await this.#ensureFolder(folder, signal);
          continue;
        }
        if (!isUncertain(error)) throw error;
        // The create may have been applied with its reply lost: look for our owner-unique prefix.
        let found: string | undefined;
        try {
          found = await this.#findOwn(folder, owner, signal);
        } catch (lookup) {
          if (signal.aborted) this.#withdrawLate(folder, owner, created);
          throw lookup;
        }
        if (found === undefined || this.session.generation !== generation) {
          await sleep(RETRY_PAUSE_MS, signal);
          continue;
        }
        path = `${folder}/${found}`;
        const entry = { folder, name: found, path, owner, generation, czxid: undefined, soleAt: undefined };
        return { entry, order: [] };
      }
      const name = path.slice(folder.length + 1);
      const sequence = sequenceOf(name);
      let order: string[] = [];
      let sole = expected !== undefined && sequence === expected;
      if (sole) {
        order = [name];
      } else if (listed) {
        try {
          const { children } = await listed;
          order = queueOrder(children);
          sole = children.length === 1 && children[0] === name;
        } catch {
          // The waiter lists the folder itself.
        }
      }
      const soleAt = sole ? sequence : undefined;
      return { entry: { folder, name, path, owner, generation, czxid, soleAt }, order };
    }
  }

  /**
   * Resolves with the entry's czxid once it is the lowest in its folder. Watches only the next-lower
   * entry, so a release wakes exactly one waiter. Throws `EntryGoneError` if the entry vanishes and
   * the signal's reason when `signal` aborts (the caller then leaves the queue).
   */
  async awaitHead(entry: QueueEntry, joined: Joined, signal: Cancel): Promise<Head> {
    let order: string[] | undefined = joined.order.length > 0 ? joined.order : undefined;
    for (;;) {
      signal.throwIfAborted();
      this.#assertAlive(entry);
      try {
        if (order === undefined) {
          order = queueOrder((await this.session.children(entry.folder, undefined, { signal })).children);
        }
        const index = order.indexOf(entry.name);
        if (index < 0) throw new EntryGoneError(entry, 'its node is no longer in the queue');
        // Known from the create's reply (CREATE2) unless the reply was lost.
        if (index === 0) return { czxid: entry.czxid ?? (await this.#czxid(entry, signal)) };
        const predecessor = `${entry.folder}/${order[index - 1]}`;
        order = undefined;
        const gone = await this.#untilDeleted(entry, predecessor, signal);
        // Sequence numbers only grow, so the entries ahead of ours can only shrink: if ours was second
        // and the one ahead is deleted, ours is the head, with no need to list the folder again.
        if (gone && index === 1) {
          this.#assertAlive(entry);
          return { czxid: entry.czxid ?? (await this.#czxid(entry, signal)) };
        }
      } catch (error) {
        if (!isUncertain(error)) throw error;
        order = undefined;
        await sleep(RETRY_PAUSE_MS, signal);
      }
    }
  }

  /**
   * Like `awaitHead`, for recipes where only some entries ahead block ours (a reader waits only for
   * writers queued before it): resolves with the entry's czxid once no entry before it satisfies
   * `blocks`, watching only the last blocking one (Curator's read lock), so a release wakes only the
   * entries it held up. `awaitHead` is `blocks = () => true`; it stays separate so the mutex's hot
   * path keeps its shortcuts.
   */
  async awaitClear(
    entry: QueueEntry,
    joined: Joined,
    signal: Cancel,
    blocks: (name: string) => boolean,
  ): Promise<Head> {
    let order: string[] | undefined = joined.order.length > 0 ? joined.order : undefined;
    for (;;) {
      signal.throwIfAborted();
      this.#assertAlive(entry);
      try {
        if (order === undefined) {
          order = queueOrder((await this.session.children(entry.folder, undefined, { signal })).children);
        }
        const index = order.indexOf(entry.name);
        if (index < 0) throw new EntryGoneError(entry, 'its node is no longer in the queue');
        const blocker = order.slice(0, index).findLast(blocks);
        if (blocker === undefined) return { czxid: entry.czxid ?? (await this.#czxid(entry, signal)) };
        order = undefined;
        await this.#untilDeleted(entry, `${entry.folder}/${blocker}`, signal);
      } catch (error) {
        if (!isUncertain(error)) throw error;
        order = undefined;
        await sleep(RETRY_PAUSE_MS, signal);
      }
    }
  }

  /**
   * Deletes the entry's node. Retries lost replies for up to one session timeout; after that the node
   * can only outlive us until the session expires. Resolves true if the node was there.
   */
  async leave(entry: QueueEntry): Promise<boolean> {
    const deadline = monotonicNow() + this.session.sessionTimeoutMs;
    for (;;) {
      if (this.session.closed || this.session.generation !== entry.generation) return false;
      try {
        const removed = await this.session.remove(entry.path, {
          timeoutMs: Math.max(1, deadline - monotonicNow()),
        });
        // The folder held only this node from its create on, unless someone created another since:
        // that create moved the counter past `soleAt + 1`, which the next join will notice.
        if (removed && entry.soleAt !== undefined) this.#rememberEmpty(entry.folder, entry.soleAt + 1);
        return removed;
      } catch (error) {
        // The pause is cut at the deadline, and nothing is sent once it has passed: a try that gave up
        // a hair before it (its timer fired early against this clock) must not buy a pause and one
        // more try past the documented bound (a release took 4 053 ms with T = 4 000 ms).
        const left = deadline - monotonicNow();
        if (!isUncertain(error) || left <= 0) throw error;
        await sleep(Math.min(RETRY_PAUSE_MS, left));
        if (monotonicNow() >= deadline) throw error;
      }
    }
  }

  /**
   * Deletes the entry's node in the background (an entry given up: a failed release or resign, a lease
   * past its window, a withdrawn wait): retries until the node is deleted or found gone, the session
   * closes or `stop` aborts, with no deadline of its own. Unlike `leave` it outlives the entry's
   * session generation: after a suspension of a session timeout `ZkSession` opens a new session, but
   * the old one is only given up locally. Through a quorum loss no leader expires it, so the servers
   * keep it and its node for one more session timeout after they are back, holding up the next waiter
   * although nobody holds the lock. Any session may delete the node, and its path (an owner id unique
   * to this entry) names nothing else, so the delete goes through the session current by then.
   * Resolves true if it deleted the node, false if the node was already gone or it was stopped.
   */
  async withdraw(entry: QueueEntry, stop?: AbortSignal): Promise<boolean> {
    for (;;) {
      if (this.session.closed || stop?.aborted) return false;
      try {
        const removed = await this.session.remove(entry.path, { signal: stop });
        if (removed && entry.soleAt !== undefined) this.#rememberEmpty(entry.folder, entry.soleAt + 1);
        return removed;
      } catch (error) {
        if (this.session.closed || stop?.aborted) return false;
        if (!isUncertain(error)) throw error;
        await sleep(RETRY_PAUSE_MS, stop).catch(() => {});
      }
    }
  }

  #rememberEmpty(folder: string, nextSequence: number): void {
    if (this.#emptyAt.size >= 1_000 && !this.#emptyAt.has(folder)) this.#emptyAt.clear();
    this.#emptyAt.set(folder, nextSequence);
  }

  #assertAlive(entry: QueueEntry): void {
    if (this.session.generation !== entry.generation) throw new EntryGoneError(entry, 'its session expired');
  }

  /** Reads the czxid of an entry whose create reply did not carry it (callers check `entry.czxid` first). */
  async #czxid(entry: QueueEntry, signal: Cancel): Promise<bigint> {
    const stat = await this.session.exists(entry.path, undefined, { signal });
    this.#assertAlive(entry);
    if (!stat) throw new EntryGoneError(entry, 'its node was deleted');
    entry.czxid = zxidOf(stat.czxid);
    return entry.czxid;
  }

  /**
   * Waits for an event on `predecessor`: true when it was deleted (or already gone), false for any
   * other change. An entry without its czxid (its create's reply was lost) has it read alongside
   * the watch, so the grant that follows does not wait for another round trip.
   */
  async #untilDeleted(entry: QueueEntry, predecessor: string, signal: Cancel): Promise<boolean> {
    let fire: (deleted: boolean) => void = () => {};
    const changed = new Promise<boolean>((resolve) => {
      fire = resolve;
    });
    const own =
      entry.czxid === undefined ? this.session.exists(entry.path, undefined, { signal }) : undefined;
    own?.catch(() => {});
    // getData, not exists: on a node that is already gone it fails without leaving a watch behind.
    // Any event on the predecessor (deleted, or data changed) sends us back to re-read the queue.
    let present = true;
    try {
      await this.session.getData(predecessor, (event) => fire(event.type === NODE_DELETED), { signal });
    } catch (error) {
      if (zkCode(error) !== ZkCode.NO_NODE) throw error;
      present = false;
    }
    if (own) {
      const ownStat = await own;
      if (!ownStat) throw new EntryGoneError(entry, 'its node was deleted');
      entry.czxid = zxidOf(ownStat.czxid);
    }
    if (!present) return true;
    let offSession: () => void = () => {};
    let onAbort: () => void = () => {};
    try {
      return await new Promise<boolean>((resolve, reject) => {
        changed.then(resolve);
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        offSession = this.session.on((event, generation) => {
          if (generation !== entry.generation) return;
          if (event === 'expired') reject(new EntryGoneError(entry, 'its session expired'));
          // Back after a disconnect: read the queue again rather than trust that the watch was
          // re-registered and that no deletion fell between (a waiter must not sit out its wait).
          else if (event === 'reconnected') resolve(false);
        });
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
      offSession();
    }
  }

  /**
   * The node of a join given up while its create was in flight (or its reply lost), deleted in the
   * background: from the create's reply if it comes, else found by the owner's unique prefix. Ends
   * once deleted or known never made, or when the session closes or the client stops its background
   * work (close()).
   */
  #withdrawLate(folder: string, owner: string, created: Promise<Created>): void {
    this.background.start(this.#withdrawCreated(folder, owner, created), () => {
      // Refused outright (not a lost answer): the session is closing or closed, and the node with it.
    });
  }

  async #withdrawCreated(folder: string, owner: string, created: Promise<Created>): Promise<void> {
    const stop = this.background.signal;
    const generation = this.session.generation;
    const entryOf = (name: string): QueueEntry => ({
      folder,
      name,
      path: `${folder}/${name}`,
      owner,
      generation,
      czxid: undefined,
      soleAt: undefined,
    });
    try {
      const { path } = await unlessAborted(created, stop);
      await this.withdraw(entryOf(path.slice(folder.length + 1)), stop);
      return;
    } catch (error) {
      if (stop.aborted || this.session.closed || !isUncertain(error)) return;
    }
    // No reply: the create may have been applied. A listing answered after it shows its node if so.
    const prefix = entryPrefix(owner, this.kind);
    for (;;) {
      if (stop.aborted || this.session.closed) return;
      try {
        const { children } = await this.session.children(folder, undefined, { signal: stop });
        for (const name of children.filter((child) => child.startsWith(prefix))) {
          await this.withdraw(entryOf(name), stop);
        }
        return;
      } catch (error) {
        if (stop.aborted || this.session.closed || zkCode(error) === ZkCode.NO_NODE) return;
        if (!isUncertain(error)) throw error;
        await sleep(RETRY_PAUSE_MS, stop).catch(() => {});
      }
    }
  }

  async #findOwn(folder: string, owner: string, signal: Cancel): Promise<string | undefined> {
    const prefix = entryPrefix(owner, this.kind);
    for (;;) {
      try {
        const { children } = await this.session.children(folder, undefined, { signal });
        return children.find((child) => child.startsWith(prefix));
      } catch (error) {
        if (zkCode(error) === ZkCode.NO_NODE) return undefined;
        if (!isUncertain(error)) throw error;
        await sleep(RETRY_PAUSE_MS, signal);
      }
    }
  }

  async #ensureFolder(folder: string, signal: Cancel): Promise<void> {
    try {
      await this.session.mkdirp(folder, { signal });
    } catch (error) {
      if (zkCode(error) !== ZkCode.NODE_EXISTS && !isUncertain(error)) throw error;
    }
  }
}
