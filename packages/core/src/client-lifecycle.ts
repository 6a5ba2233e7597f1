import { ClientClosedError, isFencekitError } from './errors.js';

/** A lease as the lifecycle sees it: something that can be given back. */
interface Releasable {
  release(): Promise<void>;
}

/**
 * The open/closing/closed bookkeeping every lock client needs: refuse work after `close()`, let
 * in-flight operations settle, give back every lease still held, then free the backend's own
 * resources, once, however often `close()` is called.
 */
export class ClientLifecycle<L extends Releasable> {
  readonly #closing = new AbortController();
  readonly #leases = new Set<L>();
  readonly #pending = new Set<Promise<unknown>>();
  #closed: Promise<void> | undefined;

  constructor(private readonly clientName: string) {}

  /** Aborted as soon as `close()` starts: waiters watch it to stop with `ClientClosedError`. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /** Throws `ClientClosedError` once `close()` has started. */
  assertOpen(): void {
    if (this.#closing.signal.aborted) throw new ClientClosedError(this.clientName);
  }

  /** Remembers `work` until it settles, so `close()` waits for it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#pending.add(work);
    const forget = (): void => {
      this.#pending.delete(work);
    };
    work.then(forget, forget);
    return work;
  }

  /** A lease this client handed out; `close()` releases it unless `forget` came first. */
  hold(lease: L): void {
    this.#leases.add(lease);
  }

  forget(lease: L): void {
    this.#leases.delete(lease);
  }

  /**
   * Idempotent close: stops new work, waits for in-flight work, releases held leases (a lease that
   * was already lost has nothing to give back), then runs `freeResources` once.
   */
  close(freeResources: () => Promise<void>): Promise<void> {
    this.#closed ??= this.#close(freeResources);
    return this.#closed;
  }

  async #close(freeResources: () => Promise<void>): Promise<void> {
    this.#closing.abort();
    await Promise.allSettled([...this.#pending]);
    await Promise.allSettled(
      [...this.#leases].map(async (lease) => {
        try {
          await lease.release();
        } catch (error) {
          if (!isFencekitError(error)) throw error;
        }
      }),
    );
    await freeResources();
  }
}
