import type { Etcd3 } from 'etcd3';
import { Session } from './session.js';
import { retryInBackground } from './withdrawal.js';

/**
 * A session that was granted but whose validity ran out (or that etcd ended) before it could be used:
 * the grant's answer waited on a busy event loop for longer than a TTL of tens of ms. etcd answered every
 * request, so this is not an outage: the waiter backs off and tries again within its wait (wait.ts).
 */
export class SessionLapsedError extends Error {
  constructor(cause: unknown) {
    super('the etcd session lapsed before it could be used (a TTL shorter than the event loop’s stalls)', {
      cause,
    });
    this.name = 'SessionLapsedError';
  }
}

interface PooledSession {
  readonly ttlMs: number;
  readonly session: Promise<Session>;
  /** The session once granted: lets a checkout skip the await when it is already there. */
  ready: Session | undefined;
  /** Queues this session currently has a key in: one key per queue per lease. */
  readonly inUse: Set<string>;
  /** Used for one grant only: revoked as soon as it is checked in. */
  readonly single: boolean;
  dead: boolean;
}

/**
 * Sessions shared by one client, one per TTL. A session's key in a queue is named after its lease,
 * so a session waits in a queue at most once; a second concurrent waiter from the same client gets
 * another session. Uncontended, every acquire reuses one session: the lease grant is paid once, not
 * per lock. In `per-grant` mode every checkout is a fresh lease of its own (kept alive while it
 * waits; the client stops that at the grant), revoked at check-in.
 */
export class SessionPool {
  readonly #etcd: Etcd3;
  readonly #callTimeoutMs: number;
  readonly #shared: boolean;
  readonly #entries: PooledSession[] = [];
  readonly #revoking = new Set<Promise<void>>();
  /** Aborted by `close()`: background revoke retries stop (close revokes once more itself). */
  readonly #closing = new AbortController();

  constructor(etcd: Etcd3, callTimeoutMs: number, mode: 'shared' | 'per-grant') {
    this.#etcd = etcd;
    this.#callTimeoutMs = callTimeoutMs;
    this.#shared = mode === 'shared';
  }

  /**
   * A live, already granted session with this TTL and no key in `queue`, reserved until `checkIn`;
   * undefined when getting one means waiting (a grant in flight, or none yet). The uncontended
   * acquire's path: no promise, no abort wiring.
   */
  checkOutNow(ttlMs: number, queue: string): { session: Session; checkIn: () => void } | undefined {
    if (!this.#shared) return undefined;
    const entry = this.#entries.find(
      (e) => !e.dead && e.ttlMs === ttlMs && e.ready?.alive === true && !e.inUse.has(queue),
    );
    const session = entry?.ready;
    if (!entry || !session) return undefined;
    entry.inUse.add(queue);
    return { session, checkIn: () => this.#checkIn(entry, queue, session) };
  }

  /** A live session with this TTL that has no key in `queue`; reserved until `checkIn`. */
  async checkOut(ttlMs: number, queue: string): Promise<{ session: Session; checkIn: () => void }> {
    // A session that died between checks is dropped and replaced; bounded so a dead cluster fails fast.
    for (let attempt = 0; ; attempt++) {
      const entry = (this.#shared ? this.#find(ttlMs, queue) : undefined) ?? this.#grant(ttlMs);
      entry.inUse.add(queue);
      let session: Session;
      try {
        session = await entry.session;
      } catch (error) {
        entry.inUse.delete(queue);
        throw error;
      }
      if (session.alive) return { session, checkIn: () => this.#checkIn(entry, queue, session) };
      entry.inUse.delete(queue);
      this.#forget(entry);
      if (attempt >= 2) throw new SessionLapsedError(session.signal.reason);
    }
  }

  #checkIn(entry: PooledSession, queue: string, session: Session): void {
    entry.inUse.delete(queue);
    if (!entry.single) return;
    this.#forget(entry);
    this.#revoke(session);
  }

  /**
   * Revokes `session` in the background (its keys go at once); `close()` awaits it. A revoke that
   * gets no answer (a short outage) is retried until etcd answers or must have dropped the lease on
   * its own (`droppedBy`), so an ended grant frees its lock when etcd is back, not a TTL later.
   */
  #revoke(session: Session): void {
    const revoking = session.close().then(async (answered) => {
      if (answered) return;
      await retryInBackground(
        async () => {
          if (!(await session.revoke())) throw new Error('revoke unanswered');
        },
        [this.#closing.signal],
        session.droppedBy,
      );
    });
    this.#revoking.add(revoking);
    void revoking.finally(() => this.#revoking.delete(revoking));
  }

  #find(ttlMs: number, queue: string): PooledSession | undefined {
    return this.#entries.find((e) => !e.dead && e.ttlMs === ttlMs && !e.inUse.has(queue));
  }

  #grant(ttlMs: number): PooledSession {
    const created: PooledSession = {
      ttlMs,
      session: Session.grant(this.#etcd, { ttlMs, callTimeoutMs: this.#callTimeoutMs }),
      inUse: new Set(),
      ready: undefined,
      single: !this.#shared,
      dead: false,
    };
    this.#entries.push(created);
    created.session.then(
      (session) => {
        created.ready = session;
        session.signal.addEventListener(
          'abort',
          () => {
            this.#forget(created);
            // Ended without close(): its validity ran out unrenewed (an outage, a stalled event
            // loop) or etcd said the lease is gone. Every lease on it is lost already, yet etcd may
            // keep its keys for up to the granted TTL: revoke it so waiters need not wait for that.
            this.#revoke(session);
          },
          { once: true },
        );
      },
      () => this.#forget(created),
    );
    return created;
  }

  /** Revokes every session (deleting their keys). */
  async close(): Promise<void> {
    this.#closing.abort();
    const entries = this.#entries.splice(0);
    await Promise.all([...this.#revoking]);
    await Promise.all(
      entries.map((e) =>
        e.session.then(
          (s) => s.close(),
          () => undefined,
        ),
      ),
    );
  }

  #forget(entry: PooledSession): void {
    entry.dead = true;
    const index = this.#entries.indexOf(entry);
    if (index >= 0) this.#entries.splice(index, 1);
  }
}
