import { LockLostError, monotonicNow, NotLockHolderError, QuorumError, settleWithin } from '@fencekit/core';
import type { AttemptReply, LockNode, ResourceKeys } from '@fencekit/redis/internal';
import { CANCEL_TIMEOUT_MS, RELEASE_TIMEOUT_MS } from './bounds.js';
import { fanOut, type NodeResult, outcomesOf } from './fan-out.js';
import { defaultNodeTimeout } from './timing.js';

export interface QuorumSettings {
  readonly nodes: readonly LockNode[];
  /** This client's wake-up channel, stored with its queue entries. */
  readonly channel: string;
  readonly waiterTtlMs: number;
  readonly drift: (ttlMs: number) => number;
  /** Per-node timeout; undefined = a twentieth of the TTL (see `defaultNodeTimeout`). */
  readonly nodeTimeoutMs: number | undefined;
  /** How long a node's head waiter keeps precedence over a free lock; undefined = 3 per-node timeouts. */
  readonly headGraceMs: number | undefined;
}

export type RoundResult =
  | { readonly granted: true; readonly sentAt: number }
  | {
      readonly granted: false;
      readonly retryMs: number;
      /** The highest next ticket the nodes offered (0 when none answered). */
      readonly ticket: number;
      /** Set when the round failed for want of answers rather than because the lock is held. */
      readonly error?: QuorumError;
      /**
       * True when this round gave back what it may have been granted (partial grants, or nodes that
       * did not answer): grants a release handed over on this round's queue entries may be gone too.
       */
      readonly gaveBack: boolean;
    };

const REFUSED = 'held by another owner, or another waiter is ahead';

/**
 * The Redlock mechanics on N independent nodes: one round of the acquire script on all of them,
 * giving back everywhere, extending and releasing on a quorum. Policy (waiting, retries, leases)
 * is the client's.
 */
export class Quorum {
  /** ⌊N/2⌋ + 1. */
  readonly size: number;

  constructor(readonly settings: QuorumSettings) {
    this.size = Math.floor(settings.nodes.length / 2) + 1;
  }

  /**
   * One Redlock round: the attempt script on every node at once; granted when a quorum agreed with
   * validity to spare. Otherwise every node gets the grant back (a node that timed out may have
   * granted), keeping a queued waiter's place. `fastPath` (for a first attempt, not queued yet)
   * tries the small uncontended script first. A refusal from it carries no ticket. With a
   * `generation`, the queue entries this round writes let a release grant the lock to the waiter
   * directly, the wake-up message carrying that generation (see `QuorumWake`).
   */
  async round(
    keys: ResourceKeys,
    resource: string,
    owner: string,
    ttlMs: number,
    mode: 'try' | 'wait',
    ticket: string,
    fastPath = false,
    generation?: string,
  ): Promise<RoundResult> {
    if (fastPath) {
      // Not queued yet: the small fast-path script first. Only when some node has waiters queued
      // (and we did not win anyway) does the full script decide, in a second round.
      const fast = await this.#fastRound(keys, resource, owner, ttlMs);
      if (fast !== undefined) return fast;
    }
    const timeoutMs = this.nodeTimeoutFor(ttlMs);
    const sentAt = monotonicNow();
    const results = await fanOut(
      this.settings.nodes,
      timeoutMs,
      (node) =>
        node.attempt(keys, {
          owner,
          ttlMs,
          mode,
          ticket,
          waiterTtlMs: this.settings.waiterTtlMs,
          channel: this.settings.channel,
          fenced: false,
          // A release may grant the lock to this waiter on each node; the waiter counts the grants
          // tagged with its latest generation and is granted once a quorum arrived.
          handoff: generation !== undefined,
          generation,
          // A head that cannot reach a quorum (partition) must not block a node it does reach for
          // the waiters that could: its precedence there lapses after this long.
          headGraceMs: this.#headGraceFor(ttlMs),
        }),
      // A quorum of grants decides; the slowest nodes' answers cannot change it.
      { count: this.size, agreed: (reply) => reply.granted },
    );
    const granted = countWhere(results, (r) => r.granted);
    const validUntil = sentAt + ttlMs - this.settings.drift(ttlMs);
    if (granted >= this.size && validUntil > monotonicNow()) {
      // Nodes that refused still list us as a waiter: take us off their queues.
      if (granted < results.length && mode === 'wait') void this.#leaveQueues(keys, owner, results);
      return { granted: true, sentAt };
    }
    return this.#failed(
      keys,
      resource,
      owner,
      ttlMs,
      results,
      granted,
      mode === 'wait' && ticket !== '' ? Number(ticket) : undefined,
      timeoutMs,
    );
  }

  /**
   * The uncontended round: the fast-path script on every node (nobody queued → SET NX PX). A result
   * when it decided (granted, or refused by a holder with nobody queued anywhere), undefined when a
   * queue on some node means the full script must decide; our grants from this round stay in place
   * for it (it re-arms them).
   */
  async #fastRound(
    keys: ResourceKeys,
    resource: string,
    owner: string,
    ttlMs: number,
  ): Promise<RoundResult | undefined> {
    const timeoutMs = this.nodeTimeoutFor(ttlMs);
    const sentAt = monotonicNow();
    const fast = await fanOut(
      this.settings.nodes,
      timeoutMs,
      (node) => node.tryAcquire(keys, owner, ttlMs, false),
      { count: this.size, agreed: (reply) => reply?.granted === true },
    );
    const granted = countWhere(fast, (r) => r?.granted === true);
    if (granted >= this.size && sentAt + ttlMs - this.settings.drift(ttlMs) > monotonicNow()) {
      return { granted: true, sentAt };
    }
    if (fast.some((r) => r.answered && r.value === undefined)) return undefined;
    const results = fast.map((r) =>
      r.answered ? { ...r, value: r.value as AttemptReply } : r,
    ) as NodeResult<AttemptReply>[];
    return this.#failed(keys, resource, owner, ttlMs, results, granted, undefined, timeoutMs);
  }

  /** A round without a valid quorum: give back what was granted, then say why it failed. */
  async #failed(
    keys: ResourceKeys,
    resource: string,
    owner: string,
    ttlMs: number,
    results: readonly NodeResult<AttemptReply>[],
    granted: number,
    queued: number | undefined,
    timeoutMs: number,
  ): Promise<RoundResult> {
    const answered = countWhere(results, () => true);
    // Our next request to each node follows this one on the same connection, so it is applied after
    // the give-back; waiting longer than a per-node timeout (for nodes that do not answer) buys
    // nothing and would stall a waiter cut off from some nodes on every round.
    const gaveBack = granted > 0 || answered < results.length;
    if (gaveBack) await this.giveBack(keys, owner, ttlMs, queued, timeoutMs);
    const tickets = results.map((r) => (r.answered && !r.value.granted ? r.value.ticket : 0));
    const retries = results
      .map((r) => (r.answered && !r.value.granted ? r.value.retryMs : Number.POSITIVE_INFINITY))
      .sort((a, b) => a - b);
    const ticketOffered = Math.max(0, ...tickets);
    const refusedBy = answered - granted;
    // Enough nodes answered and a majority of them said "taken": plain contention, wait for it.
    if (answered >= this.size && refusedBy > answered - this.size) {
      return { granted: false, retryMs: retries[0] ?? 1, ticket: ticketOffered, gaveBack };
    }
    const outcomes = outcomesOf(results, (v) => v.granted, REFUSED).map((o) =>
      o.ok && granted >= this.size ? { ...o, ok: false, reason: 'granted, but the validity was used up' } : o,
    );
    return {
      granted: false,
      retryMs: 0,
      ticket: ticketOffered,
      error: new QuorumError(resource, this.size, outcomes),
      gaveBack,
    };
  }

  /**
   * Gives a (partial) grant back on every node; with `requeue` the waiter keeps its place. Waits at
   * most `timeoutMs` for the answers; the requests complete on their own after that.
   */
  async giveBack(
    keys: ResourceKeys,
    owner: string,
    ttlMs: number,
    requeue: number | undefined,
    timeoutMs = CANCEL_TIMEOUT_MS,
  ): Promise<void> {
    // The head grace the nodes judge turns by is the rounds' one, whatever this request's own bound.
    const headGraceMs = this.#headGraceFor(ttlMs);
    await fanOut(this.settings.nodes, timeoutMs, (node) =>
      node.release(
        keys,
        owner,
        requeue === undefined
          ? undefined
          : { ticket: requeue, waiterTtlMs: this.settings.waiterTtlMs, channel: this.settings.channel },
        headGraceMs,
      ),
    );
  }

  /** The per-node timeout for a lease of `ttlMs`: `nodeTimeoutMs`, or a twentieth of the TTL. */
  nodeTimeoutFor(ttlMs: number): number {
    return this.settings.nodeTimeoutMs ?? defaultNodeTimeout(ttlMs);
  }

  /** How long a node's head waiter keeps precedence: `headGraceMs`, or 3 per-node timeouts. */
  #headGraceFor(ttlMs: number): number {
    return this.settings.headGraceMs ?? 3 * this.nodeTimeoutFor(ttlMs);
  }

  async #leaveQueues(
    keys: ResourceKeys,
    owner: string,
    results: readonly NodeResult<AttemptReply>[],
  ): Promise<void> {
    // Only nodes that answered "refused": they do not hold our grant, so release only drops the
    // queue entry there. A node still answering might grant yet; its entry simply expires.
    const refusing = results.filter((r) => r.answered && !r.value.granted).map((r) => r.node);
    await settleWithin(Promise.all(refusing.map((node) => node.release(keys, owner))), CANCEL_TIMEOUT_MS);
  }

  /** Re-arms the TTL on every node; a lease without a confirmed quorum is lost. */
  async extend(keys: ResourceKeys, resource: string, owner: string, ttlMs: number): Promise<void> {
    const results = await fanOut(this.settings.nodes, this.nodeTimeoutFor(ttlMs), (node) =>
      node.extend(keys, owner, ttlMs),
    );
    const extended = countWhere(results, (ok) => ok);
    if (extended >= this.size) return;
    const outcomes = outcomesOf(results, (ok) => ok, 'not the holder any more');
    const error = new QuorumError(resource, this.size, outcomes);
    // Without a quorum the lease cannot be trusted even before it expires: stop the holder now.
    throw new LockLostError(resource, `extension not confirmed: ${error.message}`, { cause: error });
  }

  /**
   * Releases on every node and returns once a quorum confirmed; the slower nodes' releases complete
   * in the background (`settled` receives the promise of all of them, for `close()` to wait on).
   * This cannot make the client's next acquire race its own release: its requests to one node go
   * over one connection and Redis runs them in order, so on every node the release is applied
   * before the next acquire's request.
   */
  async release(
    keys: ResourceKeys,
    resource: string,
    owner: string,
    ttlMs: number,
    settled?: (all: Promise<void>) => void,
  ): Promise<void> {
    const headGraceMs = this.#headGraceFor(ttlMs);
    const results = await fanOut(
      this.settings.nodes,
      RELEASE_TIMEOUT_MS,
      (node) => node.release(keys, owner, undefined, headGraceMs),
      // "Released" or "already gone" from a quorum: no outcome of the rest can change the answer.
      { count: this.size, agreed: (reply) => reply !== -1 },
      settled,
    );
    const takenOver = countWhere(results, (reply) => reply === -1);
    if (takenOver >= this.size) throw new NotLockHolderError(resource, owner);
    const answered = countWhere(results, () => true);
    if (answered < this.size) {
      const outcomes = outcomesOf(results, (reply) => reply !== -1, 'held by another owner');
      throw new QuorumError(resource, this.size, outcomes);
    }
  }
}

function countWhere<T>(results: readonly NodeResult<T>[], agreed: (value: T) => boolean): number {
  let count = 0;
  for (const r of results) if (r.answered && agreed(r.value)) count += 1;
  return count;
}
