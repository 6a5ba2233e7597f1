import type { UnindexedEvent } from '../history/event.js';

/** The grant a client holds, as its `acquire` op recorded it (history times, ns). */
export interface GrantSeen {
  /** The acquire was invoked: the grant was asked for no earlier than this. */
  readonly askedAt: number;
  /** The acquire returned: the client knew it held the lock from here on. */
  readonly grantedAt: number;
  /** Until when the grant was valid by the client's own reckoning (validity left at the grant), if it said. */
  readonly validUntil: number | undefined;
}

/**
 * Follows one client's `acquire` ops in its event stream, so the coordinator knows which grant the
 * client holds. Events arrive before the client's `window` message (one ordered IPC channel), so at a
 * window this is the grant the client is using.
 */
export class GrantTracker {
  readonly #invoked = new Map<number | string, number>();
  #last: GrantSeen | undefined;

  get last(): GrantSeen | undefined {
    return this.#last;
  }

  see(events: readonly UnindexedEvent[]): void {
    for (const event of events) {
      if (event.f !== 'acquire') continue;
      if (event.type === 'invoke') {
        this.#invoked.set(event.process, event.time);
        continue;
      }
      const askedAt = this.#invoked.get(event.process);
      this.#invoked.delete(event.process);
      if (event.type !== 'ok' || askedAt === undefined) continue;
      const validMs = (event.value as { validMs?: unknown } | null)?.validMs;
      this.#last = {
        askedAt,
        grantedAt: event.time,
        validUntil: typeof validMs === 'number' ? event.time + validMs * 1e6 : undefined,
      };
    }
  }
}
