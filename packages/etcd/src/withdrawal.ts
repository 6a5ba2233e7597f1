import { Backoff } from '@fencekit/core';
import { anySignal } from './abort.js';
import { isRefusal } from './errors.js';
import type { Session } from './session.js';

/**
 * Tries before a withdrawal gives up while its session still lives. Each try is bounded by
 * `callTimeoutMs` and the pauses grow to 500 ms, so this is minutes: far past any short outage. It only
 * makes sure the loop ends; an etcd that answers keep-alives answers this delete too.
 */
const MAX_TRIES = 240;

/**
 * Deletes an ended lease's key in the background. A lease can end while its key stays in etcd — a
 * holder's short `extend` lapsed, a `release` got no answer in a short outage — and on a shared,
 * kept-alive session that key would live on with the session and keep every waiter out. So the key
 * is withdrawn, retrying with core's backoff, until `tryOnce` confirms it is gone, the session ends
 * (etcd then deletes the key with its lease), the client closes (`stop`; it revokes its sessions), or
 * etcd refuses the request (a permission error will not heal by retrying). Never rejects.
 *
 * @param tryOnce one delete request (bounded by `callTimeoutMs`); resolves once the key is gone.
 */
export function withdrawInBackground(
  tryOnce: () => Promise<void>,
  session: Session,
  stop: AbortSignal,
): Promise<void> {
  return retryInBackground(tryOnce, [session.signal, stop]);
}

/**
 * Calls `tryOnce` until it resolves, with core's backoff (50 ms doubling to 500 ms) between tries, as
 * long as none of `stops` has aborted, `deadline` (a `monotonicNow()` instant) has not passed, and
 * etcd did not refuse the request. Never rejects.
 */
export async function retryInBackground(
  tryOnce: () => Promise<void>,
  stops: readonly AbortSignal[],
  deadline = Number.POSITIVE_INFINITY,
): Promise<void> {
  const ended = anySignal(stops);
  // Capped at 500 ms: once etcd is back, the clean-up that frees the queue follows within about that.
  const backoff = new Backoff({ baseMs: 50, capMs: 500 });
  try {
    for (let tries = 0; tries < MAX_TRIES && !ended.signal.aborted; tries++) {
      try {
        await tryOnce();
        return;
      } catch (error) {
        if (isRefusal((error as { cause?: unknown }).cause ?? error)) return;
      }
      if (!(await backoff.wait(ended.signal, deadline).catch(() => false))) return;
    }
  } finally {
    ended.dispose();
  }
}
