import {
  assertCandidate,
  assertNonNegativeMs,
  assertSignal,
  BackendUnavailableError,
  Backoff,
  type CampaignOptions,
  DEFAULT_WAIT_MS,
  type Election,
  InvalidArgumentError,
  type LeaderInfo,
  type Leadership,
  LockLostError,
  LockTimeoutError,
  monotonicNow,
} from '@fencekit/core';
import { CompareResult, CompareTarget, type IKeyValue, type ITxnResponse } from 'etcd3';
import { anySignal, untilAborted } from './abort.js';
import { callOptions } from './connection.js';
import { toBackendError } from './errors.js';
import { ownershipCompare } from './guard.js';
import { queuePrefix } from './keys.js';
import { EtcdLease, shareHolding } from './lease.js';
import { readHead } from './queue.js';
import { recheckEveryMs } from './turn.js';
import { backOffAfterLapse, type Granted, type QueueContext, waitForHead } from './wait.js';

/** A leader as etcd stores it: who, since which revision (the term), and what it last proclaimed. */
export interface EtcdLeaderInfo extends LeaderInfo {
  /** The value the leader campaigned with or last proclaimed (the candidate name until it proclaims). */
  readonly value: string;
}

interface StoredCandidate {
  candidate: string;
  value: string;
}

function encode(entry: StoredCandidate): string {
  return JSON.stringify(entry);
}

function leaderFrom(kv: IKeyValue | undefined): EtcdLeaderInfo | null {
  if (!kv) return null;
  const text = kv.value.toString('utf8');
  let stored: Partial<StoredCandidate> = {};
  try {
    stored = JSON.parse(text) as Partial<StoredCandidate>;
  } catch {
    // A key written by another tool: its raw value is the best name we have.
    stored = { candidate: text, value: text };
  }
  return {
    candidate: String(stored.candidate ?? text),
    value: String(stored.value ?? stored.candidate ?? text),
    term: BigInt(kv.create_revision),
  };
}

function sameLeader(a: EtcdLeaderInfo | null, b: EtcdLeaderInfo | null): boolean {
  if (a === null || b === null) return a === b;
  return a.term === b.term && a.candidate === b.candidate && a.value === b.value;
}

/** Leadership won in an etcd election: its term is the candidate key's create revision. */
/** A candidate key that changed unexpectedly is re-read and the proclaim tried again, this often. */
const MAX_PROCLAIM_TRIES = 3;

export class EtcdLeadership implements Leadership {
  readonly election: string;
  readonly candidate: string;
  readonly term: bigint;
  readonly #lease: EtcdLease;
  readonly #context: QueueContext;
  /** The candidate key's mod revision after the last answered proclaim (at first its creation: the term). */
  #proclaimed: bigint;

  constructor(context: QueueContext, election: string, candidate: string, lease: EtcdLease) {
    this.#context = context;
    this.election = election;
    this.candidate = candidate;
    this.term = lease.fence;
    this.#proclaimed = lease.fence;
    this.#lease = lease;
    shareHolding(lease, this);
  }

  get signal(): AbortSignal {
    return this.#lease.signal;
  }

  get isLeader(): boolean {
    return this.#lease.held;
  }

  /** The candidate key (compare its create revision with `term` in your own Txns). */
  get key(): string {
    return this.#lease.key;
  }

  /**
   * Announces a new value without a new election (observers see it), only while still leader: one
   * Txn guarded by the key's create revision (and by its mod revision as the last answered proclaim
   * left it, so a late copy of an earlier proclaim cannot overwrite this one). Throws `LockLostError` when leadership is gone.
   */
  async proclaim(value: string): Promise<void> {
    if (typeof value !== 'string') throw new InvalidArgumentError('value', value, 'a string');
    if (!this.#lease.held) throw new LockLostError(this.election, 'no longer the leader');
    const key = Buffer.from(this.key, 'utf8');
    const put = {
      request_put: {
        key,
        value: Buffer.from(encode({ candidate: this.candidate, value }), 'utf8'),
        lease: this.#lease.leaseId,
      },
    };
    // One deadline for all tries: the call as a whole stays within callTimeoutMs.
    const options = callOptions(this.#context.callTimeoutMs);
    for (let attempt = 0; attempt < MAX_PROCLAIM_TRIES; attempt++) {
      let response: ITxnResponse;
      try {
        response = await this.#context.etcd.kv.txn(
          {
            compare: [ownershipCompare(this)],
            success: [
              {
                request_txn: {
                  // As guardedPut: a late copy of an earlier proclaim must not overwrite this one.
                  compare: [
                    {
                      key,
                      target: CompareTarget.Mod,
                      result: CompareResult.Equal,
                      mod_revision: this.#proclaimed.toString(),
                    },
                  ],
                  success: [put],
                  failure: [{ request_range: { key, keys_only: true } }],
                },
              },
            ],
            failure: [],
          },
          options,
        );
      } catch (error) {
        throw toBackendError('proclaim', error);
      }
      if (!response.succeeded) {
        this.#lease.markLost('the candidate key is gone');
        throw new LockLostError(this.election, 'no longer the leader');
      }
      const inner = response.responses[0]?.response_txn;
      if (inner?.succeeded) {
        this.#proclaimed = BigInt(response.header.revision);
        return;
      }
      // An earlier proclaim whose answer was lost (or a late copy of one) landed: take the key as it is.
      const now = inner?.responses[0]?.response_range?.kvs[0];
      if (now) this.#proclaimed = BigInt(now.mod_revision);
    }
    throw new BackendUnavailableError('etcd', 'proclaim: the candidate key kept changing');
  }

  /** Steps down: deletes the candidate key, which wakes the next candidate. Idempotent. */
  async resign(): Promise<void> {
    await this.#lease[Symbol.asyncDispose]();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign();
  }
}

/**
 * Leader election over one etcd key prefix, like etcd's Go `concurrency.Election`: candidates queue
 * by create revision, the lowest leads, each waits for only the candidate ahead of it. `observe()`
 * follows the head of the queue through a watch.
 */
export class EtcdElection implements Election {
  readonly name: string;
  readonly #context: QueueContext;
  readonly #ttlMs: number;
  readonly #queue: string;
  readonly #closing = new AbortController();
  readonly #leaderships = new Set<EtcdLeadership>();

  constructor(context: QueueContext, name: string, ttlMs: number) {
    this.#context = context;
    this.name = name;
    this.#ttlMs = ttlMs;
    this.#queue = queuePrefix(context.prefix, 'elections', name);
  }

  async campaign(candidate: string, options: CampaignOptions = {}): Promise<EtcdLeadership> {
    assertCandidate(candidate);
    assertSignal('signal', options.signal);
    const waitMs = options.waitMs ?? (options.signal ? Number.POSITIVE_INFINITY : DEFAULT_WAIT_MS);
    assertNonNegativeMs('waitMs', waitMs === Number.POSITIVE_INFINITY ? 0 : waitMs);
    const stop = anySignal([options.signal, this.#closing.signal]);
    const startedAt = monotonicNow();
    const backoff = new Backoff({ baseMs: 50, capMs: 500 });
    try {
      for (;;) {
        const granted = await this.#context.track(
          waitForHead(this.#context, {
            kind: 'campaign',
            queue: this.#queue,
            name: this.name,
            ttlMs: this.#ttlMs,
            // The caller's wait, from the call: a lapsed grant below queues again within it, and a
            // timeout reports the waitMs the caller gave.
            waitMs,
            startedAt,
            signal: stop.signal,
            wait: true,
            value: () => encode({ candidate, value: candidate }),
          }),
        );
        if (!granted) throw new LockLostError(this.name, 'campaign ended without a grant');
        const leadership = this.#leadershipFor(candidate, granted);
        if (leadership.isLeader) {
          this.#leaderships.add(leadership);
          return leadership;
        }
        // Its session lapsed or died on the way: as with a lock, never hand out a leadership that is
        // already over (ending it withdrew the key); campaign again, after a back-off, while the wait
        // allows (then `timeout`, as for any other candidate).
        if (!(await backOffAfterLapse(backoff, [stop.signal], startedAt + waitMs))) {
          const lapsed = new LockLostError(this.name, 'the leadership arrived after its validity had passed');
          throw new LockTimeoutError(this.name, waitMs, { cause: lapsed });
        }
      }
    } finally {
      stop.dispose();
    }
  }

  #leadershipFor(candidate: string, granted: Granted): EtcdLeadership {
    // `let`: onEnd runs inside the lease's constructor when the session died on the way.
    let leadership: EtcdLeadership | undefined;
    const lease = new EtcdLease({
      context: this.#context,
      session: granted.session,
      ticket: granted.ticket,
      resource: this.name,
      owner: `${granted.session.idHex}:${candidate}`,
      onEnd: () => {
        if (leadership) this.#leaderships.delete(leadership);
        granted.checkIn();
      },
    });
    leadership = new EtcdLeadership(this.#context, this.name, candidate, lease);
    return leadership;
  }

  async leader(options: { signal?: AbortSignal } = {}): Promise<EtcdLeaderInfo | null> {
    assertSignal('signal', options.signal);
    return (await this.#readLeader(options.signal)).leader;
  }

  /**
   * The current leader, then every change (a new leader, none, or a new proclaimed value) as a watch
   * on the election prefix reports it. Changes that follow each other within one read may be seen as
   * one. Ends when `signal` aborts, the election or the client closes.
   */
  async *observe(options: { signal?: AbortSignal } = {}): AsyncGenerator<EtcdLeaderInfo | null> {
    assertSignal('signal', options.signal);
    const stop = anySignal([options.signal, this.#closing.signal, this.#context.closing]);
    const changed = new ChangeFlag();
    let watcher: Awaited<ReturnType<typeof this.startWatch>> | undefined;
    let recheck: ReturnType<typeof setInterval> | undefined;
    try {
      let { leader, revision } = await this.#readLeader(stop.signal);
      // Whether the watch (not the timer) raised the flag since the last read.
      let heard = false;
      watcher = this.startWatch(revision, () => {
        heard = true;
        changed.raise();
      });
      // The watch may run through a member gone silent and hear nothing, without failing: re-read
      // the leader on a timer too (see recheckEveryMs), a read that fails over to another member.
      recheck = setInterval(() => changed.raise(), recheckEveryMs(this.#context.callTimeoutMs));
      yield leader;
      while (!stop.signal.aborted) {
        if (!(await changed.wait(stop.signal))) return;
        const fromWatch = heard;
        heard = false;
        const next = await this.#readLeader(stop.signal).catch((error: unknown) => {
          if (stop.signal.aborted) return undefined;
          // A timer's re-read that fails changes nothing (etcd may be briefly unreachable); a change
          // the watch reported and that cannot be read ends the observation, as before.
          if (!fromWatch) return 'unread' as const;
          throw error;
        });
        if (next === 'unread') continue;
        if (!next) return;
        if (!sameLeader(next.leader, leader)) {
          leader = next.leader;
          yield leader;
        }
      }
    } finally {
      stop.dispose();
      clearInterval(recheck);
      if (watcher) void watcher.cancel().catch(() => {});
    }
  }

  /** Withdraws this election's campaigns, resigns its leaderships and ends its observers. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new LockLostError(this.name, 'election closed'));
    await Promise.allSettled([...this.#leaderships].map((l) => l.resign()));
  }

  private startWatch(revision: bigint, onChange: () => void) {
    const watcher = this.#context.etcd
      .watch()
      .prefix(this.#queue)
      .startRevision((revision + 1n).toString())
      .watcher();
    watcher.on('put', onChange);
    watcher.on('delete', onChange);
    // A broken watch is resumed by etcd3; re-read anyway so nothing in between goes unseen.
    watcher.on('connected', onChange);
    watcher.on('error', onChange);
    return watcher;
  }

  async #readLeader(
    signal: AbortSignal | undefined,
  ): Promise<{ leader: EtcdLeaderInfo | null; revision: bigint }> {
    try {
      const read = readHead(this.#context, this.#queue);
      const { head, revision } = signal ? await untilAborted(read, signal) : await read;
      return { leader: leaderFrom(head), revision };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw toBackendError('reading the leader', error);
    }
  }
}

/** A level-triggered "something changed" that one reader waits on. */
class ChangeFlag {
  #raised = false;
  #wake: (() => void) | undefined;

  raise(): void {
    this.#raised = true;
    this.#wake?.();
  }

  /** True once raised (and lowers it); false if `signal` aborts first. */
  async wait(signal: AbortSignal): Promise<boolean> {
    if (!this.#raised) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          this.#wake = undefined;
          resolve();
        };
        this.#wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
    if (signal.aborted) return false;
    this.#raised = false;
    return true;
  }
}
