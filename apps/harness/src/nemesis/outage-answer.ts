import type { UnindexedEvent } from '../history/event.js';
import type { ClientHandle } from './context.js';

/** The outcome of the request an outage was aimed at, as `context.nextEvent` watches for it. */
export type WatchedAnswer = Promise<{ event: UnindexedEvent; client: ClientHandle } | undefined> | undefined;

/**
 * Whether the request met the outage: answered after the kill at `killedAt`, or still unanswered now (the
 * restart). An answer from before the kill (or the client's next invoke of the op: its answer came with the
 * invoke, before the watch began) missed it. Ends the watch.
 */
export async function requestMetOutage(
  answer: WatchedAnswer,
  watching: AbortController,
  killedAt: number,
): Promise<boolean> {
  const pending = Symbol('pending');
  const answered = answer ? await Promise.race([answer, Promise.resolve(pending)]) : pending;
  watching.abort();
  return (
    answered === pending ||
    answered === undefined ||
    (answered.event.type !== 'invoke' && answered.event.time > killedAt)
  );
}
