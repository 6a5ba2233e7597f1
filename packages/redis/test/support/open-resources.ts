import { createHook } from 'node:async_hooks';

/** Resource types that outlive a close() as leaks: timers and sockets. */
const WATCHED = new Set(['Timeout', 'TCPWRAP', 'TCPCONNECTWRAP']);

export interface OpenResources {
  /** The watched resources still open, each as "Type: the first matching frames of where it was made". */
  open(): string[];
  stop(): void;
}

/**
 * Follows every timer and socket created from now on by code whose stack matches `from` (the
 * clients' sources and ioredis), until it is closed. Unlike counting the process's handles, it
 * sees only what the code under test opened, so it can be checked right after close() resolves
 * without another test's timer, or the test runner's, counting against it.
 */
export function watchOpenResources(from: RegExp): OpenResources {
  const open = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (!WATCHED.has(type)) return;
      const limit = Error.stackTraceLimit;
      // Deep enough to reach the client's frames below ioredis' own.
      Error.stackTraceLimit = 40;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      const frames = stack
        .split('\n')
        .filter((line) => from.test(line))
        .slice(0, 3)
        .map((line) => line.trim());
      if (frames.length > 0) open.set(id, `${type}: ${frames.join(' <- ')}`);
    },
    destroy(id) {
      open.delete(id);
    },
  });
  hook.enable();
  return { open: () => [...open.values()], stop: () => hook.disable() };
}
