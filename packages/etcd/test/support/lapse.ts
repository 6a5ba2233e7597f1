import { isFencekitError, monotonicNow } from '@fencekit/core';

/**
 * 15 ms of synchronous work every 20 ms (the #13 review's load, which outlasts TTLs of tens of ms);
 * stopped by the returned function.
 */
export function busyLoop(): () => void {
  const timer = setInterval(() => {
    const until = monotonicNow() + 15;
    while (monotonicNow() < until) {
      // Busy on purpose: this is the load that outlasts the TTLs.
    }
  }, 20);
  return () => clearInterval(timer);
}

/**
 * An attempt's outcome by kind: the error's code, 'granted', 'free' (a try's null), or 'handed-out-lapsed'
 * (a lease already not held on the first line that reads it: the contract says never).
 */
export async function outcome(
  attempt: () => Promise<{ held: boolean; release(): Promise<void> } | null>,
): Promise<string> {
  try {
    const lease = await attempt();
    if (lease === null) return 'free';
    const held = lease.held;
    await lease.release().catch(() => {});
    return held ? 'granted' : 'handed-out-lapsed';
  } catch (error) {
    return isFencekitError(error) ? error.code : `untyped: ${String(error)}`;
  }
}
