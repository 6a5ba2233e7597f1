import type { Watcher } from 'etcd3';
import { type EtcdCalls, locate, type Position, type Ticket } from './queue.js';

/**
 * How often a waiter re-reads its place while it waits for a watch event: half a request's deadline.
 * `etcd3` carries all of a client's watches on one stream, with no deadline and no gRPC keep-alive,
 * so a stream through a member that went silent (a dropped link, a member frozen in a container)
 * never reports the deletion nor fails. A unary read has a deadline and fails over to another member
 * (see `callOptions`), so it notices what the watch cannot. Half of `callTimeoutMs` (2.5 s by
 * default): a waiter then starts its turn within about that of a silent release, well inside the
 * default wait and TTL, for one small read per waiter per interval, and only while it waits — never
 * on the uncontended path.
 */
export function recheckEveryMs(callTimeoutMs: number): number {
  return callTimeoutMs / 2;
}

/**
 * Waits until `position` (behind `predecessor`) changes and returns the new one: on the watch's
 * deletion event (or its error/end) it re-reads; and every `recheckEveryMs` it re-reads anyway,
 * keeping the same watch while nothing changed. A re-read that finds the predecessor gone without an
 * event means the watch is dead; the caller's next wait opens a new one. A failed periodic read is
 * ignored (the watch may be fine); a failed read after an event throws, as before. Rejects with
 * `stop.reason` when `stop` aborts.
 */
export async function awaitTurn(
  calls: EtcdCalls,
  ticket: Ticket,
  position: Extract<Position, { kind: 'behind' }>,
  stop: AbortSignal,
): Promise<Position> {
  stop.throwIfAborted();
  let watcher: Watcher | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const woken = new Promise<'event' | Position>((resolve, reject) => {
      onAbort = () => reject(stop.reason);
      stop.addEventListener('abort', onAbort, { once: true });
      watcher = calls.etcd
        .watch()
        .key(position.predecessor)
        .startRevision((position.asOf + 1n).toString())
        .watcher();
      watcher.on('delete', () => resolve('event'));
      // A broken or compacted watch ends the wait early; the caller re-reads and watches again.
      watcher.on('error', () => resolve('event'));
      watcher.on('end', () => resolve('event'));
      let reading = false;
      timer = setInterval(() => {
        if (reading) return;
        reading = true;
        locate(calls, ticket).then(
          (now) => {
            reading = false;
            if (now.kind !== 'behind' || now.predecessor !== position.predecessor) resolve(now);
          },
          () => {
            reading = false;
          },
        );
      }, recheckEveryMs(calls.callTimeoutMs));
    });
    const outcome = await woken;
    return outcome === 'event' ? await locate(calls, ticket) : outcome;
  } finally {
    clearInterval(timer);
    if (onAbort) stop.removeEventListener('abort', onAbort);
    if (watcher) void watcher.cancel().catch(() => {});
  }
}
