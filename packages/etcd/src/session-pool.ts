import type { Etcd3 } from 'etcd3';
import { Session } from './session.js';

interface PooledSession {
  readonly ttlSeconds: number;
  readonly session: Promise<Session>;
  /** Queues this session currently has a key in: one key per queue per lease. */
  readonly inUse: Set<string>;
  dead: boolean;
}

/**
 * Sessions shared by one client, one per TTL (in whole seconds, etcd's unit). A session's key in a
 * queue is named after its lease, so a session waits in a queue at most once; a second concurrent
 * waiter from the same client gets another session. Uncontended, every acquire reuses one session:
 * the lease grant is paid once, not per lock.
 */
export class SessionPool {
  readonly #etcd: Etcd3;
  readonly #callTimeoutMs: number;
  readonly #entries: PooledSession[] = [];

  constructor(etcd: Etcd3, callTimeoutMs: number) {
    this.#etcd = etcd;
    this.#callTimeoutMs = callTimeoutMs;
  }

  /** A live session with TTL ⌈ttlMs⌉ s that has no key in `queue`; reserved until `checkIn`. */
  async checkOut(ttlMs: number, queue: string): Promise<{ session: Session; checkIn: () => void }> {
    const ttlSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
    // A session that died between checks is dropped and replaced; bounded so a dead cluster fails fast.
    for (let attempt = 0; ; attempt++) {
      const entry = this.#find(ttlSeconds, queue) ?? this.#grant(ttlSeconds);
      entry.inUse.add(queue);
      let session: Session;
      try {
        session = await entry.session;
      } catch (error) {
        entry.inUse.delete(queue);
        throw error;
      }
      if (session.alive) return { session, checkIn: () => entry.inUse.delete(queue) };
      entry.inUse.delete(queue);
      this.#forget(entry);
      if (attempt >= 2) throw session.signal.reason ?? new Error('etcd session expired at once');
    }
  }

  #find(ttlSeconds: number, queue: string): PooledSession | undefined {
    return this.#entries.find((e) => !e.dead && e.ttlSeconds === ttlSeconds && !e.inUse.has(queue));
  }

  #grant(ttlSeconds: number): PooledSession {
    const created: PooledSession = {
      ttlSeconds,
      session: Session.grant(this.#etcd, { ttlMs: ttlSeconds * 1000, callTimeoutMs: this.#callTimeoutMs }),
      inUse: new Set(),
      dead: false,
    };
    this.#entries.push(created);
    created.session.then(
      (session) => session.signal.addEventListener('abort', () => this.#forget(created), { once: true }),
      () => this.#forget(created),
    );
    return created;
  }

  /** Revokes every session (deleting their keys). */
  async close(): Promise<void> {
    const entries = this.#entries.splice(0);
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
