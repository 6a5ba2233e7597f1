import type { Redis } from 'ioredis';

/**
 * One pub/sub connection per client, shared by all of its waiters. The release script PUBLISHes the
 * head waiter's owner token on that waiter's client channel; this routes it to the parked acquire.
 * A message lost to a reconnect only delays the waiter until its fallback timer fires.
 */
export class WakeSubscriber {
  readonly #wakers = new Map<string, () => void>();
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
  on(owner: string, wake: () => void): void {
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
    await subscriber.quit().catch(() => subscriber.disconnect());
  }

  async #subscribe(): Promise<void> {
    if (this.#subscriber === undefined) {
      const subscriber = this.connect();
      subscriber.on('message', (_channel: string, owner: string) => this.#wakers.get(owner)?.());
      this.#subscriber = subscriber;
    }
    await this.#subscriber.subscribe(this.channel);
    this.#subscribed = true;
  }
}
