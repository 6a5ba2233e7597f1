import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { reportsDir } from './support/runs.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function fencekit(args: string[], interruptAfterMs?: number): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer =
      interruptAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), interruptAfterMs);
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('fencekit CLI', () => {
  it('rejects an unknown backend and fault with the known names, exit code 64', async () => {
    const r = await fencekit(['run', '--backend', 'consul', '--fault', 'meteor', '--out', out]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--backend: unknown backend; known backends: memory, redis, redlock, zk, etcd/);
    expect(r.stderr).toMatch(/unknown fault "meteor"/);
  });

  it('runs, prints the verdict and the page, and exits by verdict', async () => {
    const r = await fencekit(['run', '--backend', 'memory', '--clients', '3', '--time', '2s', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok\t.*index\.html\n$/);
    expect(r.stderr).toMatch(/phase=run/);
    expect(r.stderr).toMatch(/phase=teardown/);
  });

  it('Ctrl-C heals, tears down, leaves no process behind, and the run is not judged ok', async () => {
    const r = await fencekit(
      [
        'run',
        '--backend',
        'memory',
        '--fault',
        'pause-client',
        '--clients',
        '3',
        '--time',
        '30s',
        '--out',
        out,
      ],
      4_000,
    );
    expect(r.stderr).toMatch(/interrupted/);
    const dir = readdirSync(out).find((d) => d.includes('pause-client'))!;
    const results = JSON.parse(readFileSync(join(out, dir, 'results.json'), 'utf8'));
    expect(results.verdict).not.toBe('ok');
    expect(results.problems.join(' ')).toMatch(/interrupted/);
    const pids = [...r.stderr.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});

describe('fencekit CLI conventions (issue #16)', () => {
  it('prints its version and exits 0', async () => {
    const r = await fencekit(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [['run', '--bogus'], /unknown option '--bogus'/],
    [['launch'], /unknown command 'launch'/],
    [['check'], /missing required argument/],
    [['suite', '--seeds', '0x3'], /--seeds: a whole number from 1 to 1000/],
    [['suite', '--seeds', ''], /--seeds: a whole number from 1 to 1000/],
    [['suite', '--provider', 'mars'], /--provider: auto, local or docker/],
    [['suite', '--seed', '-1'], /--seed: a whole number/],
    [['mutants', '--seeds', '0x3'], /--seeds: a whole number from 1 to 1000/],
    [['mutants', '--provider', 'mars'], /--provider: auto, local or docker/],
    [['run', '--backend', 'memory', '--time', '0s'], /"0s" is not a duration above zero/],
    [['run', '--backend', 'memory', '--provider', 'mars'], /--provider/],
  ])('exits 64 (a usage error, never 1) for %j', async (args, message) => {
    // `--out` where the command has it, so nothing lands in the working directory.
    const r = await fencekit(
      ['run', 'suite', 'mutants'].includes(args[0] as string) ? [...args, '--out', out] : args,
    );
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(message);
  });

  it('run --json prints the result as one JSON document on stdout', async () => {
    const r = await fencekit([
      'run',
      '--backend',
      'memory',
      '--clients',
      '2',
      '--time',
      '1s',
      '--json',
      '--out',
      out,
    ]);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.verdict).toBe('ok');
    expect(result.page).toMatch(/index\.html$/);
    expect(JSON.parse(readFileSync(result.results, 'utf8')).verdict).toBe('ok');
    expect(result.meta.backend).toBe('memory');
  });
});
