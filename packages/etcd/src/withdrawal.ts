import { Backoff } from '@fencekit/core';
import { anySignal } from './abort.js';
import { isRefusal } from './queue.js';
import type { Session } from './session.js';

/**
 * Tries before a withdrawal gives up while its session still lives. Each try is bounded by
 * `callTimeoutMs` and the pauses grow to 1 s, so this is minutes: far past any short outage. It only
 * makes sure the loop ends; an etcd that answers keep-alives answers this delete too.
 */
const MAX_TRIES = 120;

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
export async function withdrawInBackground(
  tryOnce: () => Promise<void>,
  session: Session,
  stop: AbortSignal,
): Promise<void> {
  const ended = anySignal([session.signal, stop]);
  const backoff = new Backoff({ baseMs: 50, capMs: 1_000 });
  try {
    for (let tries = 0; tries < MAX_TRIES && !ended.signal.aborted; tries++) {
      try {
        await tryOnce();
        return;
      } catch (error) {
        if (isRefusal((error as { cause?: unknown }).cause ?? error)) return;
      }
      await backoff.wait(ended.signal).catch(() => {});
    }
  } finally {
    ended.dispose();
  }
}
