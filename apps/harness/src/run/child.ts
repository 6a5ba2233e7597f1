import { type ChildProcess, fork } from 'node:child_process';
import { type EntryPoint, entryPoint } from './entry-points.js';

/**
 * Forks a built entry point with an IPC channel and waits for its `{kind:'ready'}` message. The child
 * is killed if it does not become ready in time, so no start-up leaves a process behind.
 */
export async function forkReady(
  name: EntryPoint,
  args: string[],
  startMessage: Record<string, unknown> | undefined,
  timeoutMs: number,
  onMessage?: (message: Record<string, unknown>) => void,
): Promise<ChildProcess> {
  // execArgv: [] so a child is a plain node process, whatever loader flags the parent (Vitest) runs with.
  const child = fork(entryPoint(name), args, { stdio: ['ignore', 'inherit', 'pipe', 'ipc'], execArgv: [] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
    if (process.env.FENCEKIT_DEBUG) process.stderr.write(chunk);
  });
  if (onMessage) child.on('message', onMessage);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} not ready within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onReady = (message: { kind?: string; message?: string }) => {
        if (message.kind === 'ready') {
          clearTimeout(timer);
          child.off('message', onReady);
          resolve();
        } else if (message.kind === 'error') {
          clearTimeout(timer);
          reject(new Error(`${name}: ${message.message}`));
        }
      };
      child.on('message', onReady);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${signal ?? code}) before ready: ${stderr.trim()}`));
      });
      if (startMessage) child.send(startMessage);
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

/** Waits for a child to exit, SIGKILLing it (and resuming it first, if stopped) after `timeoutMs`. */
export function exited(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      resolve(false);
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The part of a `ChildProcess` that `askToStop` uses. */
export interface StoppableChild {
  readonly connected: boolean;
  send(message: { kind: string }, callback: (error: Error | null) => void): boolean;
}

/**
 * Asks a child to stop over IPC. A child that died meanwhile (Ctrl-C reaches the whole process group)
 * has a closed channel: the send fails with EPIPE, which without a callback is an `error` event on the
 * child and crashed the harness in the middle of its teardown. The caller waits for the child's exit
 * (and kills it past its bound) anyway, so a failed send needs nothing more.
 */
export function askToStop(child: StoppableChild): void {
  if (!child.connected) return;
  try {
    child.send({ kind: 'stop' }, (error) => {
      // Gone already: its exit, or the kill after the bound, ends the wait.
      void error;
    });
  } catch {
    // The channel closed between the check and the send.
  }
}
