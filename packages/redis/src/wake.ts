import type { Redis } from 'ioredis';
import { closeConnection } from './connection.js';

/**
 * One pub/sub connection per client, shared by all of its waiters. The release script PUBLISHes
 * "owner" (wake up) or "owner|fence" (the lock was handed to you) on the head waiter's client
 * channel; this routes it to the parked acquire. A message lost to a reconnect only delays the
 * waiter until its fallback timer fires, which finds the handed-over grant by its owner token.
 */
export class WakeSubscriber {
  readonly #wakers = new Map<string, (handedFence: string | undefined) => void>();
  #subscriber: Redis | undefined;
  #subscribing: Promise<void> | undefined;
  #subscribed = false;

  constructor(
    readonly channel: string,
    /** Opens the dedicated subscriber connection (a duplicate of the command connection). */
    readonly connect: () => Redis,
  ) {}

  /** Resolves once messages on the channel are delivered; undefined when that is already so. */
  ready(): Promise<void> | undefined {
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

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    this.#subscribed = false;
    this.#wakers.clear();
    if (subscriber === undefined) return;
    // Bounded: a server that stopped answering (its socket still open) would never answer QUIT.
    await closeConnection(subscriber);
  }

  async #subscribe(): Promise<void> {
    if (this.#subscriber === undefined) {
      const subscriber = this.connect();
      subscriber.on('message', (_channel: string, message: string) => {
        // Owner tokens are base64url: the first '|' can only be the separator.
        const separator = message.indexOf('|');
        if (separator === -1) this.#wakers.get(message)?.(undefined);
        else this.#wakers.get(message.slice(0, separator))?.(message.slice(separator + 1));
      });
      this.#subscriber = subscriber;
    }
    await this.#subscriber.subscribe(this.channel);
    this.#subscribed = true;
  }
}
