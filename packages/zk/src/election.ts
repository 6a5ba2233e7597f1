import {
  assertCandidate,
  assertNonNegativeMs,
  assertResource,
  assertSignal,
  assertTtlMs,
  BackendUnavailableError,
  type CampaignOptions,
  ClientClosedError,
  DEFAULT_WAIT_MS,
  type Election,
  type ElectionClient,
  IndeterminateError,
  isFencekitError,
  type LeaderInfo,
  LockAbortedError,
  LockTimeoutError,
  monotonicNow,
  sleep,
} from '@fencekit/core';
import { BackgroundWork } from './background.js';
import { type ConnectOptions, openSession } from './connect.js';
import { ZkLeadership } from './leadership.js';
import { UNSURE } from './lock.js';
import { queueOrder, segmentFor } from './paths.js';
import { EntryGoneError, type QueueEntry, SequentialQueue } from './queue.js';
import type { ZkSession } from './session.js';
import { RETRY_PAUSE_MS, waitScope } from './wait-scope.js';
import { isUncertain, ZkCallError, ZkCode, zkCode } from './zk-errors.js';
import { zxidOf } from './zxid.js';

/**
 * Leader election on ZooKeeper with the lock's mechanics: each candidate is an ephemeral-sequential
 * node under `<root>/elections/<name>/` holding the candidate's name; the lowest leads; every other
 * candidate watches only its predecessor. Term = the leader node's czxid. Leadership ends when the
 * leader resigns, its session expires (a dead leader after `sessionTimeoutMs`) or, at once, when its
 * connection is suspended (reason "unsure").
 */
export class ZkElection implements Election {
  readonly name: string;
  readonly session: ZkSession;
  readonly #folder: string;
  readonly #ownsSession: boolean;
  readonly #queue: SequentialQueue;
  readonly #terms = new Map<string, { leadership: ZkLeadership; entry: QueueEntry }>();
  readonly #closing = new AbortController();
  readonly #offSession: () => void;
  #closed = false;
  /** Background deletes of candidate nodes (`#withdraw`) still running; close() waits for them. */
  readonly #withdrawals = new BackgroundWork();
  /** Leaders' nodes whose resign was not confirmed, by path: their background withdrawal. */
  readonly #unconfirmed = new Map<string, Promise<void>>();

  constructor(name: string, options: ConnectOptions) {
    // Before the session opens: a refused name must leave nothing behind.
    assertResource(name);
    const { session, owned, root } = openSession(options);
    this.name = name;
    this.session = session;
    this.#ownsSession = owned;
    this.#folder = `${root}/elections/${segmentFor(name)}`;
    this.#queue = new SequentialQueue(session, 'candidate', this.#withdrawals);
    this.#offSession = session.on((event, generation) => {
      for (const { leadership, entry } of [...this.#terms.values()]) {
        if (event === 'suspended') leadership.lose(UNSURE, new Error('connection to ZooKeeper suspended'));
        if (event === 'expired' && entry.generation === generation)
          leadership.lose('ZooKeeper session expired');
      }
    });
  }

  async campaign(candidate: string, options: CampaignOptions = {}): Promise<ZkLeadership> {
    assertCandidate(candidate);
    assertSignal('signal', options.signal);
    const waitMs = options.waitMs ?? (options.signal ? Number.POSITIVE_INFINITY : DEFAULT_WAIT_MS);
    if (options.waitMs !== undefined) assertNonNegativeMs('waitMs', options.waitMs);
    this.#assertOpen();
    const signals = options.signal ? [options.signal, this.#closing.signal] : [this.#closing.signal];
    const scope = waitScope(waitMs, ...signals);
    try {
      for (;;) {
        let entry: QueueEntry | undefined;
        try {
          const joined = await this.#queue.join(this.#folder, Buffer.from(candidate), scope.signal);
          entry = joined.entry;
          let head = await this.#queue.awaitHead(entry, joined, scope.signal);
          if (!this.#connectedFor(entry)) {
            // Head while suspended is not leadership; look again once the connection is back.
            await this.session.ready({ signal: scope.signal, timeoutMs: Number.POSITIVE_INFINITY });
            head = await this.#queue.awaitHead(entry, { entry, order: [] }, scope.signal);
            if (!this.#connectedFor(entry))
              throw new EntryGoneError(entry, 'connection suspended at the grant');
          }
          return this.#lead(candidate, entry, head.czxid);
        } catch (error) {
          if (entry) this.#withdraw(entry);
          if (error instanceof EntryGoneError && !scope.signal.aborted) continue;
          throw error;
        }
      }
    } catch (error) {
      if (isFencekitError(error)) throw error;
      if (this.#closed) throw new ClientClosedError('ZkElection');
      if (scope.timedOut) throw new LockTimeoutError(this.name, waitMs, { cause: error });
      if (options.signal?.aborted) throw new LockAbortedError(this.name, { cause: options.signal.reason });
      if (error instanceof ZkCallError)
        throw new BackendUnavailableError('zookeeper', error.message, { cause: error });
      throw error;
    } finally {
      scope.dispose();
    }
  }

  async leader(options: { signal?: AbortSignal } = {}): Promise<LeaderInfo | null> {
    assertSignal('signal', options.signal);
    this.#assertOpen();
    // The whole call, not each try, is bounded by one session timeout: every read gets only what is
    // left (a read started just before the deadline would otherwise wait a full timeout more).
    const deadline = monotonicNow() + this.session.sessionTimeoutMs;
    for (;;) {
      try {
        const timeoutMs = Math.max(1, deadline - monotonicNow());
        const current = await this.#readLeader(undefined, options.signal, timeoutMs);
        if (current !== 'moved') return current;
      } catch (error) {
        if (!isUncertain(error) || monotonicNow() >= deadline) throw this.#unavailable(error);
        await sleep(Math.min(RETRY_PAUSE_MS, Math.max(0, deadline - monotonicNow())), options.signal);
      }
    }
  }

  /**
   * Yields the current leader (null = none), then every change. Watches only the leader's node while
   * there is one, and the election folder while there is none, so observers cost one watch each.
   */
  async *observe(options: { signal?: AbortSignal } = {}): AsyncIterable<LeaderInfo | null> {
    assertSignal('signal', options.signal);
    this.#assertOpen();
    const signal = AbortSignal.any(
      options.signal ? [options.signal, this.#closing.signal] : [this.#closing.signal],
    );
    let lastKey: string | undefined;
    while (!signal.aborted) {
      let fire: () => void = () => {};
      const changed = new Promise<void>((resolve) => {
        fire = resolve;
      });
      // A new session has none of the old watches; a reconnect may have missed nothing, but re-reading is cheap.
      const offSession = this.session.on((event) => {
        if (event !== 'suspended') fire();
      });
      try {
        const current = await this.#readLeader(() => fire(), signal);
        if (current === 'moved') continue;
        const key = current ? `${current.candidate}@${current.term}` : 'none';
        if (key !== lastKey) {
          lastKey = key;
          yield current;
        }
        await untilAborted(changed, signal);
      } catch (error) {
        if (signal.aborted) return;
        if (!isUncertain(error)) throw this.#unavailable(error);
        await sleep(RETRY_PAUSE_MS);
      } finally {
        offSession();
      }
    }
  }

  /** Resigns every leadership and withdraws every campaign of this participant. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort(new ClientClosedError('ZkElection'));
    await Promise.allSettled([...this.#terms.values()].map(({ leadership }) => leadership.resign()));
    this.#offSession();
    // An owned session's close ends the background withdrawals at once; a shared one gives them one
    // session timeout, then they stop.
    if (this.#ownsSession) await this.session.close();
    await this.#withdrawals.finish(this.session.sessionTimeoutMs);
  }

  /**
   * The leader as seen now, watching what would change it when `watcher` is given. 'moved' means the
   * head vanished between the listing and the read: look again.
   */
  async #readLeader(
    watcher: (() => void) | undefined,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<LeaderInfo | null | 'moved'> {
    const call = { signal, timeoutMs };
    let children: string[];
    try {
      ({ children } = await this.session.children(this.#folder, undefined, call));
    } catch (error) {
      if (zkCode(error) !== ZkCode.NO_NODE) throw error;
      // No folder yet: no candidate has ever joined. Wake when it is created.
      if (!watcher) return null;
      const stat = await this.session.exists(this.#folder, watcher, call);
      return stat ? 'moved' : null;
    }
    let order = queueOrder(children);
    if (order.length === 0 && watcher) {
      // Watch the folder, then re-check: a candidate may have joined in between.
      order = queueOrder((await this.session.children(this.#folder, watcher, call)).children);
    }
    const head = order[0];
    if (head === undefined) return null;
    try {
      const { data, stat } = await this.session.getData(`${this.#folder}/${head}`, watcher, call);
      return { candidate: data?.toString('utf8') ?? '', term: zxidOf(stat.czxid) };
    } catch (error) {
      if (zkCode(error) === ZkCode.NO_NODE) return 'moved';
      throw error;
    }
  }

  /** Connected, and the session's last answer still vouches for it (see `ZkSession.aliveUntil`). */
  #connectedFor(entry: QueueEntry): boolean {
    return (
      this.session.connected &&
      this.session.generation === entry.generation &&
      monotonicNow() < this.session.aliveUntil(entry.generation)
    );
  }

  #lead(candidate: string, entry: QueueEntry, term: bigint): ZkLeadership {
    const leadership = new ZkLeadership(
      this.name,
      candidate,
      term,
      entry.path,
      () => this.#resign(entry),

      () => {
        this.#terms.delete(entry.path);
      },
      () => this.session.aliveUntil(entry.generation),
    );
    this.#terms.set(entry.path, { leadership, entry });
    return leadership;
  }

  /**
   * A leadership's withdrawal (resign, or the end of a term lost or unsure): deletes the leader's
   * node, retrying for one session timeout. Unconfirmed by then, the node is withdrawn in the
   * background until deleted or gone (`SequentialQueue.withdraw`; close() bounds it), so the next
   * candidate is elected once the ensemble answers again, whether or not this session survived, and
   * the caller gets `IndeterminateError`. A resign after an unconfirmed one waits up to
   * one session timeout more for that background withdrawal: resolved once it is done, else
   * `IndeterminateError` again.
   */
  async #resign(entry: QueueEntry): Promise<void> {
    const pending = this.#unconfirmed.get(entry.path);
    if (pending) {
      const done = await settledWithin(pending, this.session.sessionTimeoutMs);
      if (!done) {
        throw new IndeterminateError(this.name, 'release', {
          cause: new Error(`candidate node ${entry.path} not deleted yet: still withdrawing it`),
        });
      }
      return;
    }
    let removed: boolean;
    try {
      removed = await this.#queue.leave(entry);
    } catch (error) {
      this.#withdrawInBackground(entry);
      throw new IndeterminateError(this.name, 'release', { cause: error });
    }
    if (!removed && this.session.givenUp(entry.generation)) {
      // Not "gone": this client gave the session up during an outage, the servers may keep it.
      this.#withdrawInBackground(entry);
      throw new IndeterminateError(this.name, 'release', {
        cause: new Error(`session of ${entry.path} given up unanswered: withdrawing it in the background`),
      });
    }
  }

  /** The background withdrawal of an unconfirmed resign, which a second resign waits for. */
  #withdrawInBackground(entry: QueueEntry): void {
    const background = this.#queue.withdraw(entry, this.#withdrawals.signal).then(
      () => {},
      () => {
        // Not an answer we can act on (the session is closing or closed): the node goes with it.
      },
    );
    this.#unconfirmed.set(entry.path, background);
    this.#withdrawals.start(
      background.finally(() => this.#unconfirmed.delete(entry.path)),
      () => {},
    );
  }

  /**
   * Deletes a candidate node in the background until it is deleted or gone, through whatever session
   * the client has by then (`SequentialQueue.withdraw`); close() bounds these.
   */
  #withdraw(entry: QueueEntry): void {
    this.#withdrawals.start(this.#queue.withdraw(entry, this.#withdrawals.signal), () => {
      // Refused outright (not a lost answer): the session is closing or closed, and the node with it.
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError('ZkElection');
  }

  #unavailable(error: unknown): unknown {
    if (isFencekitError(error)) return error;
    if (error instanceof ZkCallError)
      return new BackendUnavailableError('zookeeper', error.message, { cause: error });
    return error;
  }
}

/** Elections sharing one ZooKeeper session (or opening their own when given servers). */
export class ZkElectionClient implements ElectionClient {
  readonly session: ZkSession;
  readonly #ownsSession: boolean;
  readonly #root: string;
  readonly #elections = new Set<ZkElection>();

  constructor(options: ConnectOptions) {
    const { session, owned, root } = openSession(options);
    this.session = session;
    this.#ownsSession = owned;
    this.#root = root;
  }

  /**
   * `ttlMs` is validated but the ZooKeeper session timeout is what bounds how long a dead leader keeps
   * leadership: one session serves every election of this client.
   */
  election(name: string, options: { ttlMs: number }): ZkElection {
    assertTtlMs('ttlMs', options?.ttlMs);
    const election = new ZkElection(name, { session: this.session, root: this.#root });
    this.#elections.add(election);
    return election;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#elections].map((e) => e.close()));
    this.#elections.clear();
    if (this.#ownsSession) await this.session.close();
  }
}

/** True once `promise` settles within `ms`, false if it is still pending then. */
async function settledWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

function untilAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
