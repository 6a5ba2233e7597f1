import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SLEEPER = fileURLToPath(new URL('./java/Sleeper.java', import.meta.url));

/**
 * A JVM running `Sleeper.java` (Thread.sleep(250) in a loop, a line per wake-up) under the clock shim, with the
 * real time of every wake-up as this process saw it. Bounded: the JVM is killed by `stop()` or after 120 s.
 */
export class SleepingJvm {
  readonly ticks: number[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(shim: string, clockFile: string) {
    this.child = spawn('java', ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xmx64m', SLEEPER], {
      env: { ...process.env, LD_PRELOAD: shim, FENCEKIT_CLOCK_FILE: clockFile },
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdout?.setEncoding('utf8');
    this.child.stdout?.on('data', (chunk: string) => {
      const now = performance.now();
      for (const line of chunk.split('\n')) if (line === 'tick') this.ticks.push(now);
    });
  }

  /** Waits until `count` wake-ups were seen (the JVM compiles the source first: seconds on a busy machine). */
  async waitForTicks(count: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.ticks.length < count) {
      if (performance.now() > deadline || this.child.exitCode !== null) {
        throw new Error(`the JVM woke ${this.ticks.length} times, not ${count}, within ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Wake-ups between two instants (performance.now()). */
  between(from: number, to: number): number[] {
    return this.ticks.filter((t) => t >= from && t <= to);
  }

  async stop(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** The longest stretch without a time in [from, to]: between `from`, the times in order, and `to`. */
export function longestGap(from: number, times: readonly number[], to: number): number {
  let longest = 0;
  let previous = from;
  for (const t of [...times, to]) {
    longest = Math.max(longest, t - previous);
    previous = t;
  }
  return longest;
}
