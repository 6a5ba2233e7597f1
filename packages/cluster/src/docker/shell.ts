import { execFile } from 'node:child_process';
import type { StartedTestContainer } from 'testcontainers';
import { withTimeout } from '../wait.js';

export interface ShellResult {
  readonly exitCode: number;
  readonly output: string;
}

/** Single-quotes a word for sh. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs shell scripts inside one container. As root, through `nsenter` into the container's namespaces (about ten
 * times faster than `docker exec`, and a child process we can kill on timeout); otherwise through `docker exec`.
 * Every run is bounded and retried: an exec was seen to never return on this machine.
 */
export class ContainerShell {
  constructor(
    private readonly container: StartedTestContainer,
    private readonly initPid: number | undefined,
  ) {}

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
    const args = ['-t', String(this.initPid), '-m', '-u', '-i', '-n', '-p', '--', 'sh', '-c', script];
    return new Promise((resolve, reject) => {
      execFile('nsenter', args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`;
        if (error && typeof error.code === 'number') resolve({ exitCode: error.code, output });
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
