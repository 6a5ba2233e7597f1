import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RemoteCommandError, UnsupportedFaultError } from '../errors.js';
import type { LaunchSpec, NodeLayout } from '../local/recipe.js';
import {
  clockScript,
  runningScript,
  signalScript,
  stateScript,
  writeFilesScript,
} from '../server-scripts.js';
import type { ClusterNode } from '../types.js';
import { asRoot, startScript } from './scripts.js';
import { type RemoteResult, type RunOptions, type SshSession, shellQuote } from './session.js';

/** How long one fault's command may take on a node; a start or an install has its own, longer bound. */
export const FAULT_COMMAND_MS = 15_000;

/** One member on a machine reached over ssh: its server runs in the run's directory there, on the standard ports. */
export class SshNode implements ClusterNode {
  /** The shim's path on the node, when it was copied there and loads; else why clock faults are refused. */
  clockShim: { path: string } | { refused: string } = { refused: 'the clock shim is not loaded' };

  constructor(
    readonly layout: NodeLayout,
    readonly session: SshSession,
    /** The node's address as given (clients and peers use it). */
    readonly host: string,
    readonly launchSpec: LaunchSpec,
    readonly endpoint: string,
  ) {}

  get id(): string {
    return this.layout.id;
  }
  /** The run's directory on the node. */
  get dir(): string {
    return this.layout.dir;
  }
  get directEndpoint(): string {
    return `${this.host}:${this.layout.clientPort}`;
  }
  toJSON(): ClusterNode {
    return { id: this.id, endpoint: this.endpoint, directEndpoint: this.directEndpoint };
  }

  /** Runs a script on the node as root (bounded: `FAULT_COMMAND_MS` unless told). */
  run(script: string, options: RunOptions = {}): Promise<RemoteResult> {
    return this.session.run(asRoot(script), {
      timeoutMs: FAULT_COMMAND_MS,
      what: script.split('\n')[0]!.slice(0, 80),
      ...options,
    });
  }

  /** Like `run`; a non-zero exit is an error naming the node and carrying the output's end. */
  async check(script: string, options: RunOptions = {}): Promise<string> {
    const result = await this.run(script, options);
    if (result.exitCode !== 0) {
      const what = options.what ?? script.split('\n')[0]!.slice(0, 80);
      throw new RemoteCommandError(
        `${this.id} (${this.session.name})`,
        what,
        result.exitCode,
        `${result.stdout}${result.stderr}`.trim().slice(-2_000),
      );
    }
    return result.stdout;
  }

  async writeFiles(): Promise<void> {
    await this.check(writeFilesScript(this.dir, this.launchSpec.files ?? {}, 'path' in this.clockShim), {
      what: 'writing the configuration',
    });
  }

  async startServer(): Promise<void> {
    const env: Record<string, string> =
      'path' in this.clockShim
        ? { LD_PRELOAD: this.clockShim.path, FENCEKIT_CLOCK_FILE: `${this.dir}/clock` }
        : {};
    await this.check(startScript(this.dir, runIdOf(this.dir), 'server', this.launchSpec, env), {
      what: `starting ${this.launchSpec.command}`,
    });
  }

  async running(): Promise<boolean> {
    return (await this.run(runningScript(this.dir))).exitCode === 0;
  }

  async processState(): Promise<string | undefined> {
    const result = await this.run(stateScript(this.dir));
    const state = result.stdout.trim();
    return result.exitCode === 0 && /^[A-Za-z]$/.test(state) ? state : undefined;
  }

  async signal(signal: 'KILL' | 'STOP' | 'CONT'): Promise<void> {
    await this.check(signalScript(this.dir, signal), { what: `kill -${signal} of ${this.id}'s server` });
  }

  async writeClock(offsetMs: number, rate: number): Promise<void> {
    if ('refused' in this.clockShim)
      throw new UnsupportedFaultError(
        'clock',
        `node ${this.id} (${this.session.name})`,
        this.clockShim.refused,
      );
    await this.check(clockScript(this.dir, offsetMs, rate), { what: 'writing the clock skew' });
  }

  async logTail(): Promise<string> {
    const result = await this.run(`tail -c 2000 ${shellQuote(`${this.dir}/server.log`)}`).catch(
      () => undefined,
    );
    return result?.stdout ?? '';
  }

  /**
   * One file of the run dir (its last 8 MiB): the node says its size first, so a copy that arrives short is
   * asked again (twice at most) and, if still short, marked as such rather than passed off as the whole file.
   */
  private async copyHome(name: string): Promise<string> {
    const path = shellQuote(`${this.dir}/${name}`);
    let got = '';
    let expected = 0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        const result = await this.run(`wc -c < ${path} && tail -c ${COPY_BYTES} ${path}`, {
          timeoutMs: 60_000,
          what: `copying ${name}`,
        });
        if (result.exitCode !== 0) return `(not copied: ${result.stderr.trim()})\n`;
        const newline = result.stdout.indexOf('\n');
        expected = Math.min(Number(result.stdout.slice(0, newline)), COPY_BYTES);
        got = result.stdout.slice(newline + 1);
        if (Buffer.byteLength(got) >= expected) return got;
      } catch (error) {
        if (attempt === 3) return `(not copied: ${(error as Error).message})\n`;
      }
    }
    return `${got}\n(fencekit: copy short: the node reported ${expected} bytes, ${Buffer.byteLength(got)} arrived)\n`;
  }

  /**
   * Copies the server's log (its last 8 MiB) and configuration into `<localDir>/<id>/`, with the command line it
   * ran (etcd takes its configuration as flags). Best effort: a node that cannot be reached leaves a note instead.
   */
  async collect(localDir: string): Promise<void> {
    const dir = join(localDir, this.id);
    mkdirSync(dir, { recursive: true });
    const spec = this.launchSpec;
    writeFileSync(
      join(dir, 'command.txt'),
      `# ${this.session.name}, run directory ${this.dir}\n${[spec.command, ...spec.args].map(shellQuote).join(' ')}\n`,
    );
    const files = ['server.log', ...Object.keys(spec.files ?? {})];
    // At once over the one master: at close every node waits on its slowest copy, not on their sum.
    await Promise.all(
      files.map(async (name) =>
        writeFileSync(join(dir, name.replaceAll('/', '_')), await this.copyHome(name)),
      ),
    );
  }
}

const COPY_BYTES = 8 << 20;

/** The run id is the run directory's last component (`<baseDir>/<run id>`). */
function runIdOf(dir: string): string {
  return dir.slice(dir.lastIndexOf('/') + 1);
}
