import { rmSync } from 'node:fs';

/**
 * Last line of defence against leaked servers: every child pid and temp dir is registered here, and killed or
 * removed synchronously when this process exits or is interrupted, even if nobody called `close()`.
 */
const livePids = new Set<number>();
const liveDirs = new Set<string>();
/**
 * Synchronous clean-ups for resources that are not processes or dirs (containers, networks, ssh nodes). Each is told
 * whether this is the end (`final`: exit, or a signal nobody else handles) or a signal someone else handles (the
 * harness's Ctrl-C: it heals and tears down itself next); returning 'keep' leaves it registered for the end.
 */
export type Cleanup = (final: boolean) => unknown;
const cleanups = new Map<object, Cleanup>();
let installed = false;

export function trackPid(pid: number): void {
  install();
  livePids.add(pid);
}

export function untrackPid(pid: number): void {
  livePids.delete(pid);
}

export function trackDir(dir: string): void {
  install();
  liveDirs.add(dir);
}

export function untrackDir(dir: string): void {
  liveDirs.delete(dir);
}

/** Registers a synchronous clean-up to run at exit unless `untrackCleanup(owner)` is called first. */
export function trackCleanup(owner: object, cleanup: Cleanup): void {
  install();
  cleanups.set(owner, cleanup);
}

export function untrackCleanup(owner: object): void {
  cleanups.delete(owner);
}

/** Kills every tracked process, removes every tracked dir, runs every clean-up, synchronously. Repeatable. */
export function reapAll(final = true): void {
  for (const pid of livePids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  livePids.clear();
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  liveDirs.clear();
  for (const [owner, cleanup] of [...cleanups]) {
    let keep = false;
    try {
      keep = cleanup(final) === 'keep' && !final;
    } catch {
      // best effort at exit
    }
    if (!keep) cleanups.delete(owner);
  }
}

/**
 * How many of a signal's listeners are signal-exit's (a dependency of testcontainers' dependencies, v3 and v4; each
 * copy loaded counts itself in a shared emitter). They handle nothing: each re-raises the signal only when every
 * listener left is one of theirs, so counted as handlers they and we each waited for the other and a Ctrl-C
 * neither removed the containers nor ended the process.
 */
function signalExitListeners(): number {
  const count = (emitter: unknown): number => {
    const value = (emitter as { count?: unknown } | undefined)?.count;
    return typeof value === 'number' && value > 0 ? value : 0;
  };
  const v4 = (globalThis as Record<symbol, unknown>)[Symbol.for('signal-exit emitter')];
  const v3 = (process as unknown as { __signal_exit_emitter__?: unknown }).__signal_exit_emitter__;
  return count(v4) + count(v3);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => reapAll(true));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      // Someone else handles it too (the harness: heal, tear down, then exit): not the end yet for clean-ups.
      const handledElsewhere = process.listenerCount(signal) - 1 - signalExitListeners() > 0;
      reapAll(!handledElsewhere);
      // If nobody else handles the signal, restore the default action so the process still dies of it.
      if (!handledElsewhere) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}
