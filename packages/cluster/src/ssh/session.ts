import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from '@fencekit/core';
import { RemoteCommandError, RemoteTimeoutError, SshConnectionError } from '../errors.js';
import { trackCleanup, untrackCleanup } from '../local/reaper.js';
import { pdeathsigPath } from '../native.js';
import { shellQuote } from '../server-scripts.js';

export { shellQuote };

/** One node as the user names it: `--nodes`, `--ssh-user`, `--ssh-key`, `--ssh-port`. */
export interface SshTarget {
  /** A host name or address (no user, no port: those are `user` and `port`). */
  readonly host: string;
  readonly port?: number;
  readonly user?: string;
  /** A private key file; without one, ssh's own defaults and agent. */
  readonly keyFile?: string;
}

export interface SshSessionOptions {
  /** A directory only we use, for the master's control socket (keep it short: unix socket paths are limited). */
  readonly controlDir: string;
  /**
   * `strict` (default): the host key must already be in the user's known_hosts. `accept-new`: a host not yet known
   * is recorded in `knownHostsFile` (for nodes made per run, as the tests do); a changed key is refused either way.
   */
  readonly hostKeys?: 'strict' | 'accept-new';
  readonly knownHostsFile?: string;
  /** Bound on connecting and logging in (default 10 s). */
  readonly connectTimeoutMs?: number;
}

export interface RemoteResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Bound on the command (default 30 s): killed on the node (coreutils `timeout`) and here past it. */
  readonly timeoutMs?: number;
  /** Bytes for the command's stdin (a file to write, a config). */
  readonly input?: string | Buffer;
  /** Says what the command is, for a timeout's message (default: its first line). */
  readonly what?: string;
}

/** Output kept per stream: enough for any command of ours, bounded against a runaway one. */
const MAX_OUTPUT = 4 << 20;
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$/;
const USER = /^[a-z_][a-z0-9_.-]{0,31}$/i;

function checkTarget(target: SshTarget): void {
  if (typeof target.host !== 'string' || !HOST.test(target.host)) {
    throw new InvalidArgumentError('ssh host', target.host, 'a host name or address, without user or port');
  }
  if (
    target.port !== undefined &&
    !(Number.isInteger(target.port) && target.port >= 1 && target.port <= 65_535)
  ) {
    throw new InvalidArgumentError('ssh port', target.port, 'a port from 1 to 65535');
  }
  if (target.user !== undefined && !USER.test(target.user)) {
    throw new InvalidArgumentError('ssh user', target.user, 'a user name (letters, digits, _ . -)');
  }
  if (target.keyFile !== undefined && !existsSync(target.keyFile)) {
    throw new InvalidArgumentError('ssh key', target.keyFile, 'an existing private key file');
  }
}

/**
 * One node reached with the system `ssh`: a master connection we own (a child process, `ControlMaster`), which
 * every command reuses, so a fault costs a channel on an open connection, not a login. ssh runs in batch mode (a
 * missing key fails, it never prompts), with a connect timeout and keep-alives; every command is bounded on both
 * ends (`timeout` on the node kills it there, our timer kills the local client). `close()` ends the master.
 */
export class SshSession {
  private master: ChildProcess | undefined;
  private closed: Promise<void> | undefined;

  private constructor(
    /** For messages: `user@host:port`. */
    readonly name: string,
    private readonly target: SshTarget,
    private readonly options: SshSessionOptions,
  ) {}

  static async open(target: SshTarget, options: SshSessionOptions): Promise<SshSession> {
    checkTarget(target);
    const name = `${target.user ? `${target.user}@` : ''}${target.host}${target.port ? `:${target.port}` : ''}`;
    const session = new SshSession(name, target, options);
    await session.startMaster();
    return session;
  }

  /** The options every ssh invocation of this session shares (never a secret: the key is a path). */
  private common(): string[] {
    const { target, options } = this;
    const connectS = Math.max(1, Math.ceil((options.connectTimeoutMs ?? 10_000) / 1000));
    return [
      '-o',
      'BatchMode=yes',
      '-o',
      'PasswordAuthentication=no',
      '-o',
      'KbdInteractiveAuthentication=no',
      '-o',
      `ConnectTimeout=${connectS}`,
      '-o',
      'ServerAliveInterval=5',
      '-o',
      'ServerAliveCountMax=3',
      '-o',
      `StrictHostKeyChecking=${options.hostKeys === 'accept-new' ? 'accept-new' : 'yes'}`,
      ...(options.knownHostsFile ? ['-o', `UserKnownHostsFile=${options.knownHostsFile}`] : []),
      '-o',
      'LogLevel=ERROR',
      '-o',
      `ControlPath=${options.controlDir}/%C`,
      ...(target.keyFile ? ['-i', target.keyFile, '-o', 'IdentitiesOnly=yes'] : []),
      ...(target.port ? ['-p', String(target.port)] : []),
      ...(target.user ? ['-l', target.user] : []),
    ];
  }

  private get host(): string {
    return this.target.host.replace(/^\[(.*)\]$/, '$1');
  }

  /** The master (`-M -N`, no command), ours to kill; ready once `ssh -O check` answers. */
  private async startMaster(): Promise<void> {
    const boundMs = (this.options.connectTimeoutMs ?? 10_000) + 5_000;
    let stderr = '';
    const args = [
      ...this.common(),
      '-M',
      '-N',
      '-o',
      'ControlMaster=yes',
      '-o',
      'ControlPersist=no',
      this.host,
    ];
    // Through the launcher when there is one: the kernel then kills the master when we die, even by SIGKILL (its
    // own process group keeps it from a Ctrl-C, not from that). Without one, a later start ends it (control-dirs.ts).
    const launcher = pdeathsigPath();
    const master = spawn(launcher ?? 'ssh', launcher ? [String(process.pid), 'ssh', ...args] : args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      // Its own process group: a Ctrl-C at the terminal reaches us, not the master, so the heal that follows
      // still has its connection. The reaper kills it when we exit without closing (not on a signal someone
      // handles: the heal needs it then).
      detached: true,
    });
    this.master = master;
    trackCleanup(this, (final) => {
      if (!final) return 'keep';
      master.kill('SIGKILL');
    });
    master.once('exit', () => untrackCleanup(this));
    master.stderr?.setEncoding('utf8');
    master.stderr?.on('data', (chunk: string) => {
      if (stderr.length < 8_192) stderr += chunk;
    });
    const exited = new Promise<void>((resolve) => master.once('exit', () => resolve()));
    const deadline = performance.now() + boundMs;
    for (;;) {
      if (master.exitCode !== null || master.signalCode !== null) {
        this.master = undefined;
        throw new SshConnectionError(this.name, stderr.trim() || `ssh exited with ${master.exitCode}`);
      }
      if ((await this.control('check', 5_000)) === 0) return;
      if (performance.now() > deadline) {
        master.kill('SIGKILL');
        await exited;
        this.master = undefined;
        throw new SshConnectionError(
          this.name,
          `no master connection within ${boundMs} ms${stderr ? `: ${stderr.trim()}` : ''}`,
        );
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 100))]);
    }
  }

  /** `ssh -O <command>` on the master's socket; its exit code (0: done). */
  private control(command: 'check' | 'exit', timeoutMs: number): Promise<number> {
    return new Promise((resolve) => {
      const child = spawn('ssh', [...this.common(), '-O', command, this.host], { stdio: 'ignore' });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code ?? 255);
      });
      child.once('error', () => resolve(255));
    });
  }

  /** Whether the master connection is up (`ssh -O check`). */
  async masterRunning(): Promise<boolean> {
    return this.master !== undefined && (await this.control('check', 5_000)) === 0;
  }

  /** The pid of the master here (for tests and leak checks), while it runs. */
  get masterPid(): number | undefined {
    return this.master?.pid;
  }

  /**
   * Runs `script` with `sh` on the node, over the master. Resolves with its exit code and output whatever the
   * code; `SshConnectionError` when ssh itself failed (255), `RemoteTimeoutError` past `timeoutMs`.
   */
  run(script: string, options: RunOptions = {}): Promise<RemoteResult> {
    if (this.closed || !this.master)
      return Promise.reject(new SshConnectionError(this.name, 'the session is closed'));
    const timeoutMs = options.timeoutMs ?? 30_000;
    const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
    // On the node: killed at the bound (TERM, then KILL a second later), so nothing outlives a timed-out command.
    const remote = `timeout --kill-after=1 ${seconds} sh -c ${shellQuote(script)}`;
    const what = options.what ?? script.split('\n')[0]!.slice(0, 80);
    return new Promise((resolve, reject) => {
      const child = spawn('ssh', [...this.common(), '-o', 'ControlMaster=no', this.host, remote], {
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout?.setEncoding('utf8');
      child.stderr?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        if (stdout.length < MAX_OUTPUT) stdout += chunk;
      });
      child.stderr?.on('data', (chunk: string) => {
        if (stderr.length < MAX_OUTPUT) stderr += chunk;
      });
      if (options.input !== undefined) {
        child.stdin?.on('error', () => undefined);
        child.stdin?.end(options.input);
      }
      // Here: a little after the node's own bound, for the kill there to be reported first.
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs + 2_500);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new SshConnectionError(this.name, error.message));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        // coreutils timeout: 124 (TERM worked) or 137 (KILL was needed).
        if (timedOut || code === 124 || code === 137)
          reject(new RemoteTimeoutError(this.name, what, timeoutMs));
        else if (code === 255)
          reject(new SshConnectionError(this.name, stderr.trim() || 'ssh exited with 255'));
        else resolve({ exitCode: code ?? 255, stdout, stderr });
      });
    });
  }

  /** The ssh command line (program first) that runs `script` bounded on the node, over the master if it is up. */
  private syncArgv(script: string, timeoutMs: number): string[] {
    const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
    return [
      'ssh',
      ...this.common(),
      '-o',
      'ControlMaster=no',
      this.host,
      `timeout --kill-after=1 ${seconds} sh -c ${shellQuote(script)}`,
    ];
  }

  /**
   * `run`, synchronously: for the clean-up at exit, when no promise will be awaited. Over the master if it is
   * still up, else a connection of its own; bounded by `timeoutMs`. Its exit code (255: ssh failed, or timed out).
   */
  runSync(script: string, timeoutMs = 15_000): number {
    return SshSession.runSyncAll([this], () => script, timeoutMs)[0]!;
  }

  /**
   * `runSync` on several sessions at once (each its own script), so the whole clean-up at exit is bounded by one
   * `timeoutMs` (plus ssh's start), not one per node. Their exit codes, in order (255: ssh failed or timed out).
   */
  static runSyncAll(
    sessions: readonly SshSession[],
    script: (session: SshSession, index: number) => string,
    timeoutMs = 15_000,
  ): number[] {
    if (sessions.length === 0) return [];
    const status = mkdtempSync(join(tmpdir(), 'fk-ssh-sync-'));
    try {
      // One shell runs every ssh in the background and waits for all; each writes its exit code to a file.
      const lines = sessions.map((session, i) => {
        const argv = session.syncArgv(script(session, i), timeoutMs).map(shellQuote).join(' ');
        return `(${argv} < /dev/null > /dev/null 2>&1; echo $? > ${shellQuote(join(status, String(i)))}) &`;
      });
      spawnSync('sh', ['-c', `${lines.join('\n')}\nwait`], {
        stdio: 'ignore',
        timeout: timeoutMs + 2_500,
        killSignal: 'SIGKILL',
      });
      return sessions.map((_, i) => {
        try {
          const code = Number(readFileSync(join(status, String(i)), 'utf8').trim());
          return Number.isInteger(code) ? code : 255;
        } catch {
          return 255;
        }
      });
    } finally {
      rmSync(status, { recursive: true, force: true });
    }
  }

  /** Like `run`, but a non-zero exit is an error carrying the end of the output. */
  async check(script: string, options?: RunOptions): Promise<string> {
    const result = await this.run(script, options);
    if (result.exitCode !== 0) {
      const what = options?.what ?? script.split('\n')[0]!.slice(0, 80);
      throw new RemoteCommandError(
        this.name,
        what,
        result.exitCode,
        `${result.stdout}${result.stderr}`.trim().slice(-2_000),
      );
    }
    return result.stdout;
  }

  /** Ends the master connection (and with it this session); idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      const master = this.master;
      if (!master) return;
      const gone = new Promise<void>((resolve) => {
        if (master.exitCode !== null || master.signalCode !== null) resolve();
        else master.once('exit', () => resolve());
      });
      await this.control('exit', 5_000);
      const timer = setTimeout(() => master.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
      this.master = undefined;
    })();
    return this.closed;
  }
}
