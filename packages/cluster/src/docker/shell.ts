import { execFile } from 'node:child_process';
import type { StartedTestContainer } from 'testcontainers';
import { withTimeout } from '../wait.js';
import { cgroupProcsFiles, niceLevel } from './host-cgroups.js';

export interface ShellResult {
  readonly exitCode: number;
  readonly output: string;
}

export { shellQuote } from '../server-scripts.js';

/**
 * Joins the cgroups named before `--` and takes the nice level given first, then execs nsenter with the rest: what
 * `docker exec` gives its processes and namespaces alone do not. Without it a server started this way ran in our
 * own cgroups (invisible to `docker top`/`stats`, outside the container's limits) at our nice level.
 */
const JOIN_CONTAINER = `nice_level=$1; shift
while [ "$1" != -- ]; do echo $$ > "$1" || { echo "join-container: cannot join $1" >&2; exit 125; }; shift; done; shift
renice --priority "$nice_level" -p $$ > /dev/null || { echo "join-container: cannot renice" >&2; exit 125; }
exec nsenter "$@"`;

/**
 * Runs shell scripts inside one container. As root, through `nsenter` into the container's namespaces and cgroups,
 * at its init's nice level (about ten times faster than `docker exec`, and a child process we can kill on timeout);
 * otherwise through `docker exec`. Every run is bounded and retried: an exec was seen to never return on this
 * machine.
 */
export class ContainerShell {
  /** The container's cgroup.procs files and nice level, read once (its init never moves). */
  private readonly joins: readonly string[];

  constructor(
    private readonly container: StartedTestContainer,
    private readonly initPid: number | undefined,
  ) {
    this.joins =
      initPid === undefined ? [] : [String(niceLevel(initPid)), ...cgroupProcsFiles(initPid), '--'];
  }

  get usesNsenter(): boolean {
    return this.initPid !== undefined;
  }

  async run(script: string, options: { timeoutMs?: number; attempts?: number } = {}): Promise<ShellResult> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const attempts = options.attempts ?? 3;
    let lastError: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        return this.initPid !== undefined
          ? await this.nsenter(script, timeoutMs)
          : await this.exec(script, timeoutMs);
      } catch (error) {
        lastError = error;
      }
    }
    throw new Error(`script failed ${attempts} times in ${this.container.getId().slice(0, 12)}: ${script}`, {
      cause: lastError,
    });
  }

  /** Like `run`, but a non-zero exit is an error carrying the output. */
  async check(script: string, options?: { timeoutMs?: number; attempts?: number }): Promise<string> {
    const result = await this.run(script, options);
    if (result.exitCode !== 0) {
      throw new Error(
        `exit ${result.exitCode} in ${this.container.getId().slice(0, 12)}: ${script}\n${result.output}`,
      );
    }
    return result.output;
  }

  private nsenter(script: string, timeoutMs: number): Promise<ShellResult> {
    const nsenter = ['-t', String(this.initPid), '-m', '-u', '-i', '-n', '-p', '--', 'sh', '-c', script];
    const args = ['-c', JOIN_CONTAINER, 'join-container', ...this.joins, ...nsenter];
    return new Promise((resolve, reject) => {
      execFile('sh', args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`;
        // The wrapper's own failure is not the script's exit code: a run that never entered the container.
        if (error && error.code === 125 && output.includes('join-container:'))
          reject(new Error(output.trim()));
        else if (error && typeof error.code === 'number') resolve({ exitCode: error.code, output });
        else if (error) reject(error);
        else resolve({ exitCode: 0, output });
      });
    });
  }

  private async exec(script: string, timeoutMs: number): Promise<ShellResult> {
    const result = await withTimeout(
      this.container.exec(['sh', '-c', script]),
      timeoutMs,
      `docker exec ${script}`,
    );
    return { exitCode: result.exitCode, output: result.output };
  }
}
