import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * #20 finding 5: a harness that died without its cleanup left its resource process and the memory backend's lock
 * server running (ppid 1); a reader of its stderr going away (`| head`) made it die that way, exit 1 (= illegal).
 * Now the children exit when their IPC channel to the harness closes, and EPIPE on stdout/stderr is ignored.
 */
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'fencekit-death-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts a memory run; resolves with the harness's children once the clients are told to go. */
function startRun(): Promise<{ harness: ChildProcess; children: number[] }> {
  const args = [
    'run',
    '--backend',
    'memory',
    '--workload',
    'mutex',
    '--time',
    '6s',
    '--clients',
    '2',
    '--out',
    out,
  ];
  const harness = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no processes line in 60 s: ${text}`)), 60_000);
    harness.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (!/processes: resource pid=/.test(text)) return;
      clearTimeout(timer);
      harness.stderr!.removeAllListeners('data');
      // Its direct children by parent pid: the memory lock server, the resource, the clients.
      const listed = execFileSync('ps', ['-o', 'pid=', '--ppid', String(harness.pid)], { encoding: 'utf8' });
      resolve({ harness, children: listed.split('\n').filter(Boolean).map(Number) });
    });
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

async function gone(pids: readonly number[], withinMs: number): Promise<number[]> {
  const until = Date.now() + withinMs;
  while (Date.now() < until && pids.some(alive)) await new Promise((r) => setTimeout(r, 200));
  return pids.filter(alive);
}

describe('a harness that goes away', () => {
  it('killed outright, leaves no child behind', async () => {
    const { harness, children } = await startRun();
    expect(children.length).toBeGreaterThanOrEqual(3);
    harness.kill('SIGKILL');
    await exited(harness);
    expect(await gone(children, 15_000)).toEqual([]);
  }, 90_000);

  it('whose stderr reader went away, finishes its run, exits by its verdict (not 1) and leaves nothing', async () => {
    const { harness, children } = await startRun();
    harness.stderr!.destroy();
    const code = await exited(harness);
    expect(code).toBe(0);
    expect(await gone(children, 15_000)).toEqual([]);
  }, 90_000);
});
