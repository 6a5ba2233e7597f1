import { BackendUnavailableError, LockAbortedError, monotonicNow } from '@fencekit/core';
import { closeClient, type RedisClient } from './deployment.js';
import { errorMessage } from './failures.js';

/**
 * One pub/sub connection per client, shared by all of its waiters. The release script PUBLISHes
 * "owner" (wake up) or "owner|fence" (the lock was handed to you) on the head waiter's client
 * channel; this routes it to the parked acquire. A message lost to a reconnect only delays the
 * waiter until its fallback timer fires, which finds the handed-over grant by its owner token.
 *
 * In Redis Cluster (`shardChannel` given) a PUBLISH would be broadcast to every node over the cluster
 * bus; instead each resource a client waits on has a channel of its own carrying the resource's hash
 * tag, SPUBLISHed by the script on the node that owns the slot and SSUBSCRIBEd there (ioredis' sharded
 * subscribers) while at least one of the client's waiters waits on that resource.
 *
 * A Cluster subscriber can get stuck: one that cannot reach any of its startup nodes (the only one was a
 * primary killed by a failover) never becomes ready, and ioredis keeps its SSUBSCRIBEs in the Cluster's
 * offline queue, with no timeout, for as long as it lives. So a channel has at most one SSUBSCRIBE on the
 * way (a waiter that leaves before it is answered leaves it to the next one, and its SUNSUBSCRIBE is sent
 * only once it is answered), and an SSUBSCRIBE unanswered for `stuckMs` (doubled after each replacement that
 * brought no answer, up to 8×) replaces the subscriber by a new one (`reconnect`, seeded from the command
 * connection's slot map), where the channels still waited on are subscribed again; the old one is closed in the
 * background (`close()` waits for it), and what it had queued is failed then.
 */
export class WakeSubscriber {
  readonly #wakers = new Map<string, (handedFence: string | undefined) => void>();
  #subscriber: RedisClient | undefined;
  #subscribing: Promise<void> | undefined;
  #subscribed = false;
  /** Sharded: each resource channel's waiters and its subscription (see `Shard`). */
  readonly #shards = new Map<string, Shard>();
  /** Sharded: how many times the subscriber was replaced; a send's answer counts only for its own. */
  #rebuilds = 0;
  /** Sharded: fires when the oldest SSUBSCRIBE on the way may have been unanswered for `#stuckBoundMs()`. */
  #watchdog: NodeJS.Timeout | undefined;
  /** Sharded: replacements since an SSUBSCRIBE was last answered. */
  #fruitlessRebuilds = 0;
  /** Replaced subscribers being closed: `close()` waits for them. */
  readonly #retiring = new Set<Promise<void>>();

  constructor(
    readonly channel: string,
    /** Opens the dedicated subscriber connection (a duplicate of the command connection). */
    readonly connect: () => RedisClient,
    /** Redis Cluster: the sharded channel of a resource's waiters (see `resourceWakeChannel`). */
    readonly shardChannel?: (resource: string) => string,
    /** Redis Cluster: how long an SSUBSCRIBE may go unanswered before the subscriber is replaced. */
    readonly stuckMs = 3_000,
    /** Redis Cluster: opens the replacement of a stuck subscriber (seeded from the command connection's slot map). */
    readonly reconnect: () => RedisClient = connect,
  ) {}

  /** The channel a waiter on `resource` gives the scripts. */
  channelFor(resource: string): string {
    return this.shardChannel === undefined ? this.channel : this.shardChannel(resource);
  }

  /**
   * Resolves once messages on `channel` are delivered; undefined when that is already so. A sharded
   * channel counts one more user, whom `leave(channel)` must end (whether or not this resolved).
   */
  ready(channel = this.channel): Promise<void> | undefined {
    if (this.shardChannel !== undefined) return this.#readyShard(channel);
    if (this.#subscribed) return undefined;
    this.#subscribing ??= this.#subscribe().catch((error: unknown) => {
      this.#subscribing = undefined;
      throw error;
    });
    return this.#subscribing;
  }

  /** Whether messages on `channel` are delivered now (no SUBSCRIBE to wait for). */
  isReady(channel = this.channel): boolean {
    if (this.shardChannel === undefined) return this.#subscribed;
    return this.#shards.get(channel)?.subscribed === true;
  }

  /** Routes wake-ups for `owner` to `wake` until `off(owner)`. */
  on(owner: string, wake: (handedFence: string | undefined) => void): void {
    this.#wakers.set(owner, wake);
  }

  off(owner: string): void {
    this.#wakers.delete(owner);
  }

  /** Sharded: one waiter on `channel` less; the last one gone, SUNSUBSCRIBE (in the background). */
  leave(channel: string): void {
    const shard = this.#shards.get(channel);
    if (shard === undefined) return;
    shard.users -= 1;
    if (shard.users > 0) return;
    if (shard.subscribed) this.#unsubscribe(channel);
    // Still on the way: kept, so that the next waiter on the resource takes it over instead of queueing
    // another SSUBSCRIBE behind it, and unsubscribed once answered (see #send).
    else if (shard.pending === undefined) this.#shards.delete(channel);
  }

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    this.#subscribed = false;
    // Answers arriving from now on belong to no subscriber of ours.
    this.#rebuilds += 1;
    clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    this.#wakers.clear();
    this.#shards.clear();
    // Bounded: a server that stopped answering (its socket still open) would never answer QUIT.
    await Promise.all([subscriber === undefined ? undefined : closeClient(subscriber), ...this.#retiring]);
  }

  #readyShard(channel: string): Promise<void> | undefined {
    let shard = this.#shards.get(channel);
    if (shard === undefined) {
      shard = { users: 0, subscribed: false, pending: undefined };
      this.#shards.set(channel, shard);
    }
    shard.users += 1;
    if (shard.subscribed) return undefined;
    return (shard.pending ?? this.#send(channel, shard)).promise;
  }

  /** SSUBSCRIBE `channel` on the current subscriber; `shard.pending` (kept across a rebuild) settles with it. */
  #send(channel: string, shard: Shard): Pending {
    let pending = shard.pending;
    if (pending === undefined) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      // Its waiters handle its failure; one left by all of them must not be an unhandled rejection.
      promise.catch(() => undefined);
      pending = { promise, resolve, reject, sentAt: 0, rebuilds: 0 };
      shard.pending = pending;
    }
    const sent = pending;
    const rebuilds = this.#rebuilds;
    sent.sentAt = monotonicNow();
    sent.rebuilds = rebuilds;
    const current = (): boolean =>
      shard.pending === sent && sent.rebuilds === rebuilds && this.#rebuilds === rebuilds;
    this.#connected()
      .ssubscribe(channel)
      .then(
        () => {
          if (!current()) return;
          this.#fruitlessRebuilds = 0;
          shard.pending = undefined;
          shard.subscribed = true;
          sent.resolve();
          // Every waiter left while it was on the way.
          if (shard.users === 0) this.#unsubscribe(channel);
        },
        (error: unknown) => {
          if (!current()) return;
          // A failed one is sent again by the next waiter on this resource.
          shard.pending = undefined;
          sent.reject(error);
          if (shard.users === 0) this.#shards.delete(channel);
        },
      );
    this.#watch();
    return sent;
  }

  #unsubscribe(channel: string): void {
    this.#shards.delete(channel);
    // Sent after the SSUBSCRIBE on the same connection; a failure only leaves a silent subscription.
    this.#subscriber?.sunsubscribe(channel).catch(() => undefined);
  }

  /** Arms the watchdog for the oldest SSUBSCRIBE on the way, if none is armed. */
  #watch(): void {
    if (this.#watchdog !== undefined) return;
    let oldest: number | undefined;
    for (const shard of this.#shards.values()) {
      if (shard.pending !== undefined && shard.pending.rebuilds === this.#rebuilds) {
        oldest = Math.min(oldest ?? shard.pending.sentAt, shard.pending.sentAt);
      }
    }
    if (oldest === undefined) return;
    this.#watchdog = setTimeout(
      () => {
        this.#watchdog = undefined;
        const stuck = [...this.#shards.values()].some(
          (shard) =>
            shard.pending !== undefined &&
            shard.pending.rebuilds === this.#rebuilds &&
            monotonicNow() - shard.pending.sentAt >= this.#stuckBoundMs(),
        );
        if (stuck) this.#rebuild();
        else this.#watch();
      },
      Math.max(1, oldest + this.#stuckBoundMs() - monotonicNow()),
    );
    // Cleared by close(); it must not keep a process alive that forgot to close the client.
    this.#watchdog.unref();
  }

  /**
   * Replaces a stuck subscriber: its subscriptions go with it; the channels still waited on are subscribed
   * on a new one (made when the first of them is sent), the others forgotten.
   */
  #rebuild(): void {
    const old = this.#subscriber;
    this.#subscriber = undefined;
    this.#rebuilds += 1;
    this.#fruitlessRebuilds += 1;
    for (const [channel, shard] of this.#shards) {
      shard.subscribed = false;
      if (shard.users === 0) this.#shards.delete(channel);
      else this.#send(channel, shard);
    }
    if (old === undefined) return;
    const closing = retire(old).finally(() => this.#retiring.delete(closing));
    this.#retiring.add(closing);
  }

  /**
   * `stuckMs`, doubled for each replacement that brought no answer, up to 8 times: a node that no subscriber
   * can reach (cut off from the clients) would otherwise have one opened and closed every `stuckMs`.
   */
  #stuckBoundMs(): number {
    return this.stuckMs * 2 ** Math.min(this.#fruitlessRebuilds, 3);
  }

  #connected(): RedisClient {
    if (this.#subscriber === undefined) {
      const subscriber = this.#rebuilds === 0 ? this.connect() : this.reconnect();
      const deliver = (_channel: string, message: string): void => {
        // Owner tokens are base64url: the first '|' can only be the separator.
        const separator = message.indexOf('|');
        if (separator === -1) this.#wakers.get(message)?.(undefined);
        else this.#wakers.get(message.slice(0, separator))?.(message.slice(separator + 1));
      };
      subscriber.on('message', deliver);
      subscriber.on('smessage', deliver);
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }

  async #subscribe(): Promise<void> {
    await this.#connected().subscribe(this.channel);
    this.#subscribed = true;
  }
}

/** A resource channel's waiters and its SSUBSCRIBE. */
interface Shard {
  users: number;
  /** Answered on the current subscriber. */
  subscribed: boolean;
  /** On the way (at most one per channel); kept while a waiter is left or until answered. */
  pending: Pending | undefined;
}

/** What `ready` hands the waiters of a channel while its SSUBSCRIBE is on the way. */
interface Pending {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
  /** `monotonicNow()` when last sent. */
  sentAt: number;
  /** The subscriber it was last sent on (`WakeSubscriber.#rebuilds` then). */
  rebuilds: number;
}

/**
 * Closes a replaced subscriber, bounded as `closeClient`. A Cluster that never got a node keeps what was queued
 * for it, unanswered, even once closed (ioredis flushes its offline queue only when it ends, which a Cluster
 * between two attempts to connect never does): flushed here, so none of it outlives the close.
 */
async function retire(subscriber: RedisClient): Promise<void> {
  await closeClient(subscriber);
  // Not in ioredis' declared types; every 5.x Cluster has it.
  const flush = (subscriber as unknown as { flushQueue?: (error: Error) => void }).flushQueue;
  if (typeof flush === 'function') flush.call(subscriber, new Error('wake-up subscriber replaced'));
}

/**
 * Waits, before a waiter queues, for the subscription `ready` stands for (`WakeSubscriber.ready`), so that a
 * release right after the waiter queued is heard, but never longer than `boundMs`: past it the waiter queues
 * anyway and its heartbeat (its sleeps never exceed one) finds a grant handed over meanwhile, until the
 * subscription is up for later waits. Without the bound a Redis Cluster subscriber that cannot reach a node
 * (after a failover) kept its SSUBSCRIBE in ioredis' Cluster offline queue, which has no timeout, and the
 * acquire with it (issue #17: 25 s to 132 s past the bound). `LockAbortedError` on the caller's `signal`;
 * `BackendUnavailableError` when the subscription failed within the bound (a refusal, a closed connection).
 */
export async function awaitSubscription(
  ready: Promise<void>,
  options: { backend: string; resource: string; boundMs: number; signal: AbortSignal | undefined },
): Promise<void> {
  const { signal } = options;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      // A subscription that fails after the bound is left to the next waiter: handled here, never unhandled.
      ready.then(resolve, reject);
      timer = setTimeout(resolve, Math.max(0, options.boundMs));
      if (signal === undefined) return;
      onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  } catch (error) {
    if (signal?.aborted) throw new LockAbortedError(options.resource, { cause: signal.reason });
    throw new BackendUnavailableError(
      options.backend,
      `cannot subscribe for wake-ups: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
  }
}
