import type { StartedTestContainer } from 'testcontainers';
import { UnsupportedFaultError } from '../errors.js';
import type { LaunchSpec, NodeLayout } from '../local/recipe.js';
import {
  clockScript,
  runningScript,
  signalScript,
  stateScript,
  writeFilesScript,
} from '../server-scripts.js';
import type { ClusterNode } from '../types.js';
import { hostPort } from './engine.js';
import { type ContainerShell, shellQuote } from './shell.js';

export const DATA_DIR = '/data';
export const SHIM_IN_CONTAINER = '/opt/fencekit/libfencekit-clockshim.so';
const PID_FILE = `${DATA_DIR}/server.pid`;

/** One cluster member: a container that stays up while its server process is killed and started inside it. */
export class DockerNode implements ClusterNode {
  /** A second process started with the server (its Sentinel); faults act on the server only. */
  companionSpec: (LaunchSpec & { readonly name: string }) | undefined;

  constructor(
    readonly layout: NodeLayout,
    readonly container: StartedTestContainer,
    readonly shell: ContainerShell,
    /** All of this container's addresses: a partition must drop every one of them. */
    readonly addresses: readonly string[],
    /** Where the engine publishes the container's ports: loopback, or a remote engine's host. */
    readonly portsHost: string,
    readonly mappedClientPort: number,
    private readonly launchSpec: LaunchSpec,
    private readonly clockShim: boolean,
    readonly endpoint: string,
  ) {}

  get id(): string {
    return this.layout.id;
  }
  get directEndpoint(): string {
    return hostPort(this.portsHost, this.mappedClientPort);
  }
  get containerId(): string {
    return this.container.getId();
  }
  toJSON(): ClusterNode {
    return {
      id: this.id,
      endpoint: this.endpoint,
      directEndpoint: this.directEndpoint,
      containerId: this.containerId,
    };
  }

  /** Writes the launch files (first start only). */
  async writeFiles(): Promise<void> {
    const files = { ...this.launchSpec.files, ...this.companionSpec?.files };
    const script = writeFilesScript(DATA_DIR, files, this.clockShim);
    if (script) await this.shell.check(script);
  }

  /** Starts the server in the background inside the container, recording its pid. */
  async startServer(): Promise<void> {
    const env = { ...this.launchSpec.env };
    if (this.clockShim) {
      env.LD_PRELOAD = SHIM_IN_CONTAINER;
      env.FENCEKIT_CLOCK_FILE = `${DATA_DIR}/clock`;
    }
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
    const command = [this.launchSpec.command, ...this.launchSpec.args].map(shellQuote).join(' ');
    await this.shell.check(
      `cd ${DATA_DIR} && env ${assignments.join(' ')} ${command} >> ${DATA_DIR}/server.log 2>&1 < /dev/null & echo $! > ${PID_FILE}`,
    );
  }

  /** Starts the companion (Sentinel), if any, in the background with its own log; it lives as long as the container. */
  async startCompanion(): Promise<void> {
    const spec = this.companionSpec;
    if (!spec) return;
    const command = [spec.command, ...spec.args].map(shellQuote).join(' ');
    await this.shell.check(
      `cd ${DATA_DIR} && ${command} >> ${DATA_DIR}/${spec.name}.log 2>&1 < /dev/null & echo $! > ${DATA_DIR}/${spec.name}.pid`,
    );
  }

  /** Whether the server process is running (stopped counts; gone or a zombie does not). */
  async running(): Promise<boolean> {
    const result = await this.shell.run(runningScript(DATA_DIR));
    return result.exitCode === 0;
  }

  /** The server process' state letter as /proc inside the container shows it, or undefined when it is gone. */
  async processState(): Promise<string | undefined> {
    const result = await this.shell.run(stateScript(DATA_DIR));
    const state = result.output.trim();
    return result.exitCode === 0 && /^[A-Za-z]$/.test(state) ? state : undefined;
  }

  /**
   * Sends a signal to the server process; for SIGKILL, waits (bounded) until it is gone and does nothing when it
   * is not running. STOP and CONT throw when there is no running server to signal.
   */
  async signal(signal: 'KILL' | 'STOP' | 'CONT'): Promise<void> {
    if (signal === 'KILL') {
      await this.shell.run(signalScript(DATA_DIR, 'KILL'));
      return;
    }
    await this.shell.check(signalScript(DATA_DIR, signal));
  }

  async logTail(): Promise<string> {
    const result = await this.shell.run(`tail -c 2000 ${DATA_DIR}/server.log`).catch(() => undefined);
    return result?.output ?? '';
  }

  /** Writes the clock shim's skew file atomically; without the shim in the server, the clock cannot move. */
  async writeClock(offsetMs: number, rate: number): Promise<void> {
    if (!this.clockShim) {
      throw new UnsupportedFaultError(
        'clock',
        `node ${this.id}`,
        'the clock shim is not loaded into its server',
      );
    }
    await this.shell.check(clockScript(DATA_DIR, offsetMs, rate));
  }

  /** Runs iptables inside the container. */
  async iptables(rules: readonly string[]): Promise<void> {
    if (rules.length > 0) await this.shell.check(rules.map((r) => `iptables -w ${r}`).join(' && '));
  }
}
