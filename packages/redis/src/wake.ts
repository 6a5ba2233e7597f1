import { BackendUnavailableError, LockAbortedError } from '@fencekit/core';
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
 */
export class WakeSubscriber {
  readonly #wakers = new Map<string, (handedFence: string | undefined) => void>();
  #subscriber: RedisClient | undefined;
  #subscribing: Promise<void> | undefined;
  #subscribed = false;
  /** Sharded: each resource channel's waiters, its SSUBSCRIBE in flight, and whether one succeeded. */
  readonly #shards = new Map<
    string,
    { users: number; subscribing: Promise<void> | undefined; subscribed: boolean }
  >();

  constructor(
    readonly channel: string,
    /** Opens the dedicated subscriber connection (a duplicate of the command connection). */
    readonly connect: () => RedisClient,
    /** Redis Cluster: the sharded channel of a resource's waiters (see `resourceWakeChannel`). */
    readonly shardChannel?: (resource: string) => string,
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
    this.#shards.delete(channel);
    // Sent after the SSUBSCRIBE on the same connection; a failure only leaves a silent subscription.
    this.#subscriber?.sunsubscribe(channel).catch(() => undefined);
  }

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    this.#subscribed = false;
    this.#wakers.clear();
    this.#shards.clear();
    if (subscriber === undefined) return;
    // Bounded: a server that stopped answering (its socket still open) would never answer QUIT.
    await closeClient(subscriber);
  }

  #readyShard(channel: string): Promise<void> | undefined {
    let shard = this.#shards.get(channel);
    if (shard === undefined) {
      shard = { users: 0, subscribing: undefined, subscribed: false };
      this.#shards.set(channel, shard);
    }
    shard.users += 1;
    if (shard.subscribed) return undefined;
    if (shard.subscribing === undefined) {
      const entry = shard;
      entry.subscribing = this.#connected()
        .ssubscribe(channel)
        // A failed one is sent again by the next waiter on this resource.
        .then(() => {
          entry.subscribed = true;
        })
        .finally(() => {
          entry.subscribing = undefined;
        });
    }
    return shard.subscribing;
  }

  #connected(): RedisClient {
    if (this.#subscriber === undefined) {
      const subscriber = this.connect();
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
