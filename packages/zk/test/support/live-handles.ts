import { createHook } from 'node:async_hooks';

/** Handle types that count as leaks after close(): timers and sockets. */
const TRACKED = new Set(['Timeout', 'TCPWRAP', 'TCPCONNECTWRAP']);

/**
 * Records the timers and sockets created from now on whose creation stack passes through code of
 * `from` (by file path), until they are destroyed. Counting all the process's handles would not do:
 * the ensemble's fault proxies run in the test process and keep sockets to stopped servers.
 */
export function trackHandles(from: RegExp): { live(): string[]; stop(): void } {
  const live = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (!TRACKED.has(type)) return;
      const frames = (new Error().stack ?? '').split('\n').slice(2);
      const ours = frames.filter((frame) => from.test(frame));
      if (ours.length > 0)
        live.set(
          id,
          `${type} ${ours
            .slice(0, 4)
            .map((f) => f.trim())
            .join(' <- ')}`,
        );
    },
    destroy(id) {
      live.delete(id);
    },
  });
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  hook.enable();
  return {
    live: () => [...live.values()],
    stop: () => {
      hook.disable();
      Error.stackTraceLimit = limit;
    },
  };
}

/** The tracked handles still alive `afterMs` after now (sockets finish closing a few ticks late). */
export async function liveAfter(tracker: { live(): string[] }, afterMs: number): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  return tracker.live();
}
