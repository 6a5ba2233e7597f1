import { ClientClosedError, isFencekitError } from './errors.js';

/** A lease as the lifecycle sees it: something that can be given back, and may say it has ended. */
interface Releasable {
  release(): Promise<void>;
  /** false once the lease ended; reading it lets a lazily expiring lease notice its expiry. */
  readonly held?: boolean;
}

/** Held leases are swept for ended ones whenever their number doubles past this. */
const SWEEP_FLOOR = 64;

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
  #sweepAt = SWEEP_FLOOR;

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
    if (this.#leases.size < this.#sweepAt) return;
    // A lease left to expire with lazy expiry ends only when something looks at it: look now and then,
    // so a caller who lets leases run out does not grow this set without bound. Amortised O(1).
    for (const held of [...this.#leases]) if (held.held === false) this.#leases.delete(held);
    this.#sweepAt = Math.max(SWEEP_FLOOR, this.#leases.size * 2);
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
        if (lease.held === false) return;
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
