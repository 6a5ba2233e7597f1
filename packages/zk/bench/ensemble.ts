import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface Ensemble {
  /** The follower every client uses, as `host:port`. */
  servers: string;
  follower: string;
  leader: string | undefined;
  close(): Promise<void>;
}

/** Starts `ensemble-process.js` and waits for its endpoints (bounded: a start takes seconds). */
export async function startEnsemble(timeoutMs = 120_000): Promise<Ensemble> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./ensemble-process.js', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    await exited;
  };
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  try {
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => String(line)),
      exited.then(() => {
        throw new Error(`the ensemble process exited before printing its endpoints (code ${child.exitCode})`);
      }),
    ]);
    const info = JSON.parse(first) as Omit<Ensemble, 'close'>;
    return { ...info, close };
  } catch (error) {
    await close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
