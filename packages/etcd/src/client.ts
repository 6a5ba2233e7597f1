import { randomUUID } from 'node:crypto';
import {
  assertResource,
  assertSignal,
  assertTtlMs,
  Backoff,
  ClientClosedError,
  type ElectionClient,
  InvalidArgumentError,
  type LockCapabilities,
  type LockClient,
  LockLostError,
  LockTimeoutError,
  monotonicNow,
  normalizeAcquire,
} from '@fencekit/core';
import type { Etcd3 } from 'etcd3';
import { closeOpened, openClient, trackIn } from './client-setup.js';
import type { Connection, EtcdConnectionOptions } from './connection.js';
import { EtcdElection } from './election.js';
import { queuePrefix } from './keys.js';
import { EtcdLease } from './lease.js';
import { backOffAfterLapse, type Granted, type QueueContext, waitForHead } from './wait.js';

export interface EtcdClientOptions extends EtcdConnectionOptions {
  /** Key prefix for every lock and election key. Default `"fencekit"`. */
  prefix?: string;
  /**
   * true (default): keys live on a session kept alive in the background, like etcd's Go
   * `concurrency` package — a lease is held until released or until its client can no longer reach
   * etcd. false: every grant gets its own etcd lease of `ttlMs` that only `extend()` renews (as
   * `withLock` does) — the lock ends `ttlMs` after the last extension, like a Redis lock, at the cost
   * of one more round trip per acquire (the lease grant).
   */
  keepAlive?: boolean;
}

/**
 * etcd locks and elections (`etcd3` client) with fences etcd itself can enforce.
 *
 * - Fair: waiters are granted in the order their keys were created (create revision), each watching
 *   only the key just ahead of it.
 * - Fence: the lock key's create revision, strictly increasing across all holders of a resource.
 * - Liveness: keys are attached to a session lease kept alive in the background; a lease is held
 *   until released or until its session is lost (keep-alive refused, or its TTL ran out on the local
 *   monotonic clock since the last answered keep-alive). A crashed holder's lock frees itself after
 *   the TTL.
 * - Not re-entrant: a second acquire of a held resource from the same client queues behind the first.
 */
export class EtcdClient implements LockClient<bigint>, ElectionClient {
  readonly backend = 'etcd';
  readonly capabilities: LockCapabilities = { safeFences: true, fair: true, faultTolerant: true };
  readonly #connection: Connection;
  readonly #context: QueueContext;
  readonly #closing = new AbortController();
  readonly #inflight = new Set<Promise<unknown>>();
  #closed: Promise<void> | undefined;
  readonly #keepAlive: boolean;

  constructor(options: EtcdClientOptions) {
    const opened = openClient(options, this.#closing.signal, (work) => this.#track(work));
    this.#connection = opened.connection;
    this.#context = opened.context;
    this.#keepAlive = opened.keepAlive;
  }

  /** The underlying `etcd3` client, for your own transactions (see `ownershipCompare`). */
  get etcd(): Etcd3 {
    return this.#connection.etcd;
  }

  async acquire(resource: string, options: Parameters<LockClient<bigint>['acquire']>[1]): Promise<EtcdLease> {
    const o = normalizeAcquire(resource, options);
    const lease = await this.#lock(o.resource, o.ttlMs, o.waitMs, o.signal, true);
    if (!lease) throw new LockTimeoutError(o.resource, o.waitMs);
    return lease;
  }

  async tryAcquire(
    resource: string,
    options: Parameters<LockClient<bigint>['tryAcquire']>[1],
  ): Promise<EtcdLease | null> {
    assertResource(resource);
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', options, 'an object with ttlMs');
    }
    assertTtlMs('ttlMs', options.ttlMs);
    assertSignal('signal', options.signal);
    return await this.#lock(resource, options.ttlMs, Number.POSITIVE_INFINITY, options.signal, false);
  }

  /** An election named `name`; candidates' keys live under `<prefix>/elections/<name>/`. */
  election(name: string, options: { ttlMs: number }): EtcdElection {
    assertResource(name);
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', options, 'an object with ttlMs');
    }
    assertTtlMs('ttlMs', options.ttlMs);
    if (this.#closing.signal.aborted) throw new ClientClosedError('etcd client');
    return new EtcdElection(this.#context, name, options.ttlMs);
  }

  /**
   * Stops waiters and campaigns (`ClientClosedError`), then revokes every session, which deletes all
   * the client's keys at once — held leases, leaderships, waiters — and ends their leases (`signal`
   * aborts with "session closed"); closes the etcd client. At most 2 × `callTimeoutMs` against an
   * etcd that does not answer: a request in flight, then the revokes (sent together).
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #lock(
    resource: string,
    ttlMs: number,
    waitMs: number,
    signal: AbortSignal | undefined,
    wait: boolean,
  ): Promise<EtcdLease | null> {
    if (this.#closing.signal.aborted) throw new ClientClosedError('etcd client');
    const startedAt = monotonicNow();
    const backoff = new Backoff({ baseMs: 50, capMs: 500 });
    for (;;) {
      const granted = await this.#track(
        waitForHead(this.#context, {
          kind: 'lock',
          queue: queuePrefix(this.#context.prefix, 'locks', resource),
          name: resource,
          ttlMs,
          // The caller's wait, from the call: a lapsed grant below queues again within it, and a
          // timeout reports the waitMs the caller gave.
          waitMs,
          startedAt,
          signal,
          wait,
          // The owner token: unguessable, and names the session for whoever reads the key.
          value: (session) => `${session.idHex}:${randomUUID()}`,
        }),
      );
      if (!granted) return null;
      const lease = this.#leaseFor(resource, granted);
      // Reading `held`, not `signal`, keeps the lease from building a signal nobody may ever read.
      if (lease.held) return lease;
      // The grant's validity ran out before it could be handed out: its session lapsed on the way (a
      // TTL of tens of ms on a busy event loop) or died. Never hand that out. Ending it checked the
      // session in and, if that still lives, withdraws the key in the background; queue again (at the
      // back, with a live session), after a back-off, while the caller's wait allows.
      const lapsed = new LockLostError(resource, 'the grant arrived after its validity had passed');
      if (!wait) throw lapsed;
      // When the wait runs out first, that is what the caller sees, as any other waiter would.
      if (!(await backOffAfterLapse(backoff, [signal, this.#closing.signal], startedAt + waitMs))) {
        throw new LockTimeoutError(resource, waitMs, { cause: lapsed });
      }
    }
  }

  /** The lease for a grant; it has ended already (and checked its session in) if the session died on the way. */
  #leaseFor(resource: string, granted: Granted): EtcdLease {
    // Per-grant leases were kept alive only while waiting; from the grant on, only extend() renews.
    if (!this.#keepAlive) granted.session.stopKeepAlive();
    return new EtcdLease({
      context: this.#context,
      session: granted.session,
      ticket: granted.ticket,
      resource,
      owner: granted.ticket.value,
      onEnd: granted.checkIn,
    });
  }

  #track<T>(work: Promise<T>): Promise<T> {
    return trackIn(this.#inflight, work);
  }

  #close(): Promise<void> {
    return closeOpened(
      { connection: this.#connection, context: this.#context },
      this.#closing,
      this.#inflight,
      'etcd client',
    );
  }
}
