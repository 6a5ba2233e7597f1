import {
  type AcquireOptions,
  type ExtendOptions,
  type Fence,
  type Lease,
  type LockClient,
  LockLostError,
  monotonicNow,
  type TryAcquireOptions,
} from '@fencekit/core';

/** When a view's validity is computed: at the grant's answer, or at an extension's. */
export interface ValidityEvent {
  readonly lease: Lease<Fence | undefined>;
  readonly ttlMs: number;
  /** `monotonicNow()` when the answer was in the client's hands. */
  readonly answeredAt: number;
}

/** A mutant's own idea of a lease's validity, from the adapter's lease and the moment of the answer. */
export type Validity = (event: ValidityEvent) => number;

/**
 * A lease whose `validUntil` (and so `held`, `signal`) is the mutant's, while `release`, `extend` and
 * the fence are the adapter's. It ends when the adapter says the grant is gone for any reason but
 * its own clock (release, loss), so only the validity computation is mutated.
 */
class ViewedLease implements Lease<Fence | undefined> {
  #validUntil: number;
  #ended = false;
  readonly #controller = new AbortController();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly inner: Lease<Fence | undefined>,
    readonly validity: Validity,
    ttlMs: number,
  ) {
    this.#validUntil = validity({ lease: inner, ttlMs, answeredAt: monotonicNow() });
    inner.signal.addEventListener('abort', () => {
      const reason = inner.signal.reason;
      // The adapter's own expiry is exactly what the mutant overrides; anything else ends the view.
      if (!(reason instanceof LockLostError && reason.reason === 'ttl expired')) this.#end(reason);
    });
    this.#arm();
  }

  get resource(): string {
    return this.inner.resource;
  }
  get owner(): string {
    return this.inner.owner;
  }
  get fence(): Fence | undefined {
    return this.inner.fence;
  }
  get validUntil(): number {
    return this.#validUntil;
  }
  get held(): boolean {
    return !this.#ended && monotonicNow() < this.#validUntil;
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  async extend(ttlMs: number, options?: ExtendOptions): Promise<void> {
    await this.inner.extend(ttlMs, options);
    this.#validUntil = this.validity({ lease: this.inner, ttlMs, answeredAt: monotonicNow() });
    this.#arm();
  }

  async release(): Promise<void> {
    this.#end(new LockLostError(this.resource, 'released by its holder'));
    await this.inner.release();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.inner[Symbol.asyncDispose]();
    this.#end(new LockLostError(this.resource, 'released by its holder'));
  }

  #arm(): void {
    clearTimeout(this.#timer);
    const expire = () => {
      if (monotonicNow() < this.#validUntil) this.#arm();
      else this.#end(new LockLostError(this.resource, 'ttl expired'));
    };
    this.#timer = setTimeout(expire, Math.max(0, this.#validUntil - monotonicNow()));
    this.#timer.unref();
  }

  #end(reason: unknown): void {
    clearTimeout(this.#timer);
    if (this.#ended) return;
    this.#ended = true;
    this.#controller.abort(reason);
  }
}

/** `locks` with every lease it grants seen through `validity`. */
export function withValidity(
  locks: LockClient<Fence | undefined>,
  validity: Validity,
): LockClient<Fence | undefined> {
  return {
    backend: locks.backend,
    capabilities: locks.capabilities,
    async acquire(resource: string, options: AcquireOptions) {
      return new ViewedLease(await locks.acquire(resource, options), validity, options.ttlMs);
    },
    async tryAcquire(resource: string, options: TryAcquireOptions) {
      const lease = await locks.tryAcquire(resource, options);
      return lease === null ? null : new ViewedLease(lease, validity, options.ttlMs);
    },
    close: () => locks.close(),
  };
}
