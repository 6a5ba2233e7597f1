import { nowNs } from '../history/clock.js';

/**
 * Measures the client process's own stalls: stretches in which its event loop ran nothing (a loaded
 * machine's scheduler, GC, a SIGSTOP). A timer is armed every `TICK_MS`; a tick that comes more than
 * `minMs` late marks a stall from when it was due to when it ran, on the history's clock. The client
 * records them on its `close` op (`stalls`, `[start ns, length ms]` pairs), and the liveness check
 * treats a stall of at least the TTL like a paused client (check/checkers.ts): whatever the lock needed
 * that client for (a keep-alive answered, a grant that arrives still valid) could not happen then.
 */
export const TICK_MS = 10;
/** At most this many stalls are kept (the longest, when there are more). */
const MAX_STALLS = 2_000;

export interface StallWatch {
  /** Stops measuring; the stalls seen, `[start ns, length ms]`, in time order, and the longest (ms). */
  stop(): { stalls: [number, number][]; longestMs: number };
}

export function watchStalls(minMs: number): StallWatch {
  const stalls: [number, number][] = [];
  let longestMs = 0;
  let due = nowNs() + TICK_MS * 1e6;
  const timer = setInterval(() => {
    const now = nowNs();
    const lateMs = (now - due) / 1e6;
    if (lateMs > longestMs) longestMs = lateMs;
    if (lateMs >= minMs) {
      stalls.push([due, Math.round(lateMs * 10) / 10]);
      if (stalls.length > MAX_STALLS) {
        // Drop the shortest: the long ones are what the checks need.
        let shortest = 0;
        for (let i = 1; i < stalls.length; i++) if (stalls[i]![1] < stalls[shortest]![1]) shortest = i;
        stalls.splice(shortest, 1);
      }
    }
    due = now + TICK_MS * 1e6;
  }, TICK_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return { stalls, longestMs: Math.round(longestMs * 10) / 10 };
    },
  };
}
