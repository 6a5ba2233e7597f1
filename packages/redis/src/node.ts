import type { RedisClient } from './deployment.js';
import { keyList, type ResourceKeys } from './keys.js';
import { type CommandDeadlines, callScript, LuaScript } from './script-call.js';
import {
  acquireScript,
  extendScript,
  releaseScript,
  tryAcquireEpochScript,
  tryAcquireScript,
} from './scripts.lua.js';
import { isViewError, NO_VIEW, type SentinelView, SentinelViews } from './sentinel-view.js';

/** One attempt's answer from one Redis node. */
export type AttemptReply =
  | { readonly granted: true; readonly fence: string | null }
  | {
      readonly granted: false;
      readonly retryMs: number;
      readonly ticket: number;
      /** A fenced wait's refusal: the fence counter when the server refused (a string, past 2^53). */
      readonly fenceSeen?: string;
    };

/** 1 released, 0 already gone, -1 another owner holds the lock. */
export type ReleaseReply = 1 | 0 | -1;

/** How a queued waiter is put back in line after giving back a partial grant. */
export interface Requeue {
  readonly ticket: number;
  readonly waiterTtlMs: number;
  readonly channel: string;
}

export interface AttemptRequest {
  readonly owner: string;
  readonly ttlMs: number;
  /** 'try': never queue. 'wait': queue with `ticket` ('auto', a number, or '' to only learn a ticket). */
  readonly mode: 'try' | 'wait';
  readonly ticket: string;
  readonly waiterTtlMs: number;
  readonly channel: string;
  readonly fenced: boolean;
  /** Let a release grant the lock to this waiter directly (fenced), instead of only waking it. */
  readonly handoff: boolean;
  /**
   * How long the head of the queue keeps precedence once the lock is free without it taking the
   * lock; after that any queued waiter may be granted. 0 (default): for as long as the head lives.
   */
  readonly headGraceMs?: number;
  /**
   * With `handoff`: a release's direct grant is unfenced and its wake-up message carries this tag
   * instead of a fence. Redlock's waiter tags each attempt, so that it counts only grants made on the
   * queue entries of its latest attempt (see the Redlock client).
   */
  readonly generation?: string;
}

const TRY = new LuaScript(tryAcquireScript, 3);

/** `tryAcquireRaw`'s answer as an attempt reply (undefined: a queue exists, `attempt` decides). */
export function tryAcquireReply(reply: number | string): AttemptReply | undefined {
  if (typeof reply === 'string') return { granted: true, fence: reply };
  if (reply >= 0) return { granted: true, fence: reply === 0 ? null : String(reply) };
  if (reply === -1) return undefined;
  return { granted: false, retryMs: -2 - reply, ticket: 0 };
}
const ACQUIRE = new LuaScript(acquireScript, 5);
const RELEASE = new LuaScript(releaseScript, 5);
// The same scripts given the epoch key as well, which turns epoch fences on (see scripts.lua.ts).
const TRY_EPOCH = new LuaScript(tryAcquireEpochScript, 4);
const ACQUIRE_EPOCH = new LuaScript(acquireScript, 6);
const RELEASE_EPOCH = new LuaScript(releaseScript, 6);
const EXTEND = new LuaScript(extendScript, 1);

/**
 * The lock scripts on one ioredis connection, each called by SHA (EVALSHA), falling back to EVAL
 * when the server answers NOSCRIPT (after a restart or SCRIPT FLUSH).
 */
export class LockNode {
  /** Epoch fences through Sentinels: the view each grant is checked against (sentinel-view.ts). */
  readonly #views: SentinelViews | undefined;

  constructor(
    /** How this node is named in errors: "127.0.0.1:6379". */
    readonly name: string,
    readonly redis: RedisClient,
    /** Bounds each command when the connection has no `commandTimeout` of its own. */
    readonly deadlines?: CommandDeadlines,
    /** Fences are epoch fences (`RedisLockClient`'s `fence: 'epoch'`): the scripts get the epoch key. */
    readonly epochFences = false,
  ) {
    this.#views = epochFences ? SentinelViews.of(redis) : undefined;
  }

  /**
   * Runs an epoch-fence script with the current Sentinel view; a view the script finds stale (the node
   * restarted, was replaced or promoted since) is read again once. A view that still does not hold stays an
   * error reply, which the client reports as `BackendUnavailableError`.
   */
  async #withView<T>(run: (view: SentinelView) => Promise<T>): Promise<T> {
    const views = this.#views;
    if (views === undefined) return run(NO_VIEW);
    const view = await views.current();
    try {
      return await run(view);
    } catch (error) {
      if (!isViewError(error)) throw error;
      views.invalidate(view);
      return run(await views.current());
    }
  }

  /**
   * The uncontended fast path's raw answer (see tryAcquireScript): a fence (> 0; a string past
   * 2^53), 0 for an unfenced grant, -1 when a queue exists (`attempt` must decide), -2 - pttl when
   * the lock is held. Read by `tryAcquireReply`; the Redis client reads it itself, without building
   * a reply object or a fence string per grant.
   */
  tryAcquireRaw(keys: ResourceKeys, owner: string, ttlMs: number, fenced: boolean): Promise<number | string> {
    if (this.epochFences && fenced) {
      return this.#withView(
        (view) =>
          callScript(this.redis, this.deadlines, TRY_EPOCH, [
            keys.lock,
            keys.fence,
            keys.queue,
            keys.epoch,
            owner,
            ttlMs,
            '1',
            ...view.args,
          ]) as Promise<number | string>,
      );
    }
    return callScript(
      this.redis,
      this.deadlines,
      TRY,
      fenced
        ? [keys.lock, keys.fence, keys.queue, owner, ttlMs]
        : [keys.lock, keys.fence, keys.queue, owner, ttlMs, '0'],
    ) as Promise<number | string>;
  }

  /**
   * The uncontended fast path: granted, or refused because the lock is held, when nobody is queued;
   * `undefined` when a queue exists and `attempt` must decide.
   */
  async tryAcquire(
    keys: ResourceKeys,
    owner: string,
    ttlMs: number,
    fenced: boolean,
  ): Promise<AttemptReply | undefined> {
    return tryAcquireReply(await this.tryAcquireRaw(keys, owner, ttlMs, fenced));
  }

  async attempt(keys: ResourceKeys, request: AttemptRequest): Promise<AttemptReply> {
    const args = [
      request.owner,
      request.ttlMs,
      request.mode,
      request.ticket,
      request.waiterTtlMs,
      request.channel,
      request.fenced ? '1' : '0',
      request.handoff ? '1' : '0',
      request.headGraceMs ?? 0,
      request.generation ?? '',
    ];
    const reply = (
      this.epochFences
        ? await this.#withView((view) =>
            callScript(this.redis, this.deadlines, ACQUIRE_EPOCH, [
              ...keyList(keys),
              keys.epoch,
              ...args,
              ...view.args,
            ]),
          )
        : await callScript(this.redis, this.deadlines, ACQUIRE, [...keyList(keys), ...args])
    ) as [number, (string | number | null)?, number?, string?];
    if (reply[0] === 1) return { granted: true, fence: (reply[1] as string | null | undefined) ?? null };
    const refused = {
      granted: false as const,
      retryMs: Number(reply[1] ?? 0),
      ticket: Number(reply[2] ?? 0),
    };
    return reply[3] === undefined ? refused : { ...refused, fenceSeen: reply[3] };
  }

  /** `headGraceMs` as in `AttemptRequest`: the release also wakes the next waiter once the head's turn lapsed. */
  async release(
    keys: ResourceKeys,
    owner: string,
    requeue?: Requeue,
    headGraceMs = 0,
  ): Promise<ReleaseReply> {
    if (requeue === undefined && headGraceMs === 0)
      return Number(await this.releaseRaw(keys, owner)) as ReleaseReply;
    const args = [
      owner,
      requeue === undefined ? '' : requeue.ticket,
      requeue?.waiterTtlMs ?? 0,
      requeue?.channel ?? '',
      headGraceMs,
    ];
    if (this.epochFences) return Number(await this.#releaseEpoch(keys, args)) as ReleaseReply;
    return Number(
      await callScript(this.redis, this.deadlines, RELEASE, [...keyList(keys), ...args]),
    ) as ReleaseReply;
  }

  /**
   * A plain release (no requeue, no head grace) as the script answers it: 1, 0 or -1 (see
   * `ReleaseReply`). The lease's release reads it itself, one async step fewer on its hot path.
   */
  releaseRaw(keys: ResourceKeys, owner: string): Promise<unknown> {
    if (this.epochFences) return this.#releaseEpoch(keys, [owner, '', 0, '', 0]);
    return callScript(this.redis, this.deadlines, RELEASE, [
      keys.lock,
      keys.fence,
      keys.queue,
      keys.waiters,
      keys.tickets,
      owner,
    ]);
  }

  /**
   * A release never fails on the view: the script checks it only to hand the lock over (see the release
   * script), so the last view read is sent as it is, not read again first.
   */
  #releaseEpoch(keys: ResourceKeys, args: readonly (string | number)[]): Promise<unknown> {
    const view = this.#views?.last ?? NO_VIEW;
    return callScript(this.redis, this.deadlines, RELEASE_EPOCH, [
      ...keyList(keys),
      keys.epoch,
      ...args,
      ...view.args,
    ]);
  }

  async extend(keys: ResourceKeys, owner: string, ttlMs: number): Promise<boolean> {
    return Number(await callScript(this.redis, this.deadlines, EXTEND, [keys.lock, owner, ttlMs])) === 1;
  }
}
