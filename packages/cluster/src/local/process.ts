import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { pdeathsigPath } from '../native.js';
import { withTimeout } from '../wait.js';
import { trackPid, untrackPid } from './reaper.js';

export interface ProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** stdout and stderr are appended here, across restarts. */
  readonly logFile: string;
}

/** One server process that can be killed and started again with the same command line. */
export class ServerProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;

  constructor(readonly spec: ProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  start(): void {
    if (this.running) return;
    const log = openSync(this.spec.logFile, 'a');
    try {
      // Through the launcher when there is one: the kernel then kills the server even if we die by SIGKILL.
      const launcher = pdeathsigPath();
      const [command, args] = launcher
        ? [launcher, [String(process.pid), this.spec.command, ...this.spec.args]]
        : [this.spec.command, [...this.spec.args]];
      const child = spawn(command, args, {
        cwd: this.spec.cwd,
        env: { ...process.env, ...this.spec.env },
        stdio: ['ignore', log, log],
      });
      this.child = child;
      this.paused = false;
      this.exited = new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.once('error', () => resolve());
      });
      const pid = child.pid;
      if (pid !== undefined) {
        trackPid(pid);
        void this.exited.then(() => untrackPid(pid));
      }
    } finally {
      closeSync(log);
    }
  }

  /** Sends `signal` and waits (bounded) for the process to be gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill(signal);
    if (signal !== 'SIGKILL' && this.paused) child.kill('SIGCONT');
    try {
      await withTimeout(this.exited, timeoutMs, `pid ${child.pid} to exit after ${signal}`);
    } catch (error) {
      if (signal === 'SIGKILL') throw error;
      await this.kill('SIGKILL', timeoutMs);
    }
    this.paused = false;
  }

  pause(): void {
    if (!this.running || this.paused) return;
    this.child?.kill('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    if (!this.running || !this.paused) return;
    this.child?.kill('SIGCONT');
    this.paused = false;
  }

  /** The last `bytes` of the log, for error messages. */
  logTail(bytes = 2000): string {
    try {
      const text = readFileSync(this.spec.logFile, 'utf8');
      return text.slice(-bytes);
    } catch {
      return '';
    }
  }
}
