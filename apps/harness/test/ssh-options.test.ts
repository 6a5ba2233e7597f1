import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBackend } from '../src/backends/index.js';
import { OptionsError, parseRunOptions } from '../src/index.js';
import { validateRun } from '../src/run/compatibility.js';
import { sshDeploy } from '../src/run/ssh-options.js';
import { sshMatrix } from '../src/suite/matrix.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fencekit-ssh-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SECRET = 'BEGIN OPENSSH PRIVATE KEY very-secret-material';
const key = join(dir, 'id_test');
writeFileSync(key, `${SECRET}\n`);

function problem(input: Parameters<typeof parseRunOptions>[0]): string {
  try {
    parseRunOptions(input);
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

/** `--provider ssh` options, checked before anything connects (`npm test`: no node needed). */
describe('--provider ssh options', () => {
  const base = { backend: 'etcd', workload: 'inventory', provider: 'ssh' } as const;

  it('takes nodes and the login, and hands the deployment paths, never contents', () => {
    const o = parseRunOptions({
      ...base,
      nodes: 'n1.lan, 10.0.0.2:2222,10.0.0.3',
      sshUser: 'deploy',
      sshKey: key,
      sshPort: '22' as never,
      sshHostKeys: 'accept-new',
    });
    expect(o.nodes).toEqual(['n1.lan', '10.0.0.2:2222', '10.0.0.3']);
    expect(sshDeploy(o, '/reports/run/nodes')).toEqual({
      nodes: ['n1.lan', '10.0.0.2:2222', '10.0.0.3'],
      user: 'deploy',
      keyPath: key,
      port: 22,
      hostKeys: 'accept-new',
      collectDir: '/reports/run/nodes',
    });
  });

  it.each([
    [{ ...base }, /--nodes: --provider ssh needs the machines/],
    [{ ...base, nodes: 'root@n1' }, /--nodes\.0: host or host:port/],
    [{ ...base, nodes: 'a,a:2222' }, /--nodes: each host once/],
    [{ ...base, nodes: 'a', sshPort: '0' as never }, /--ssh-port: a port from 1 to 65535/],
    [{ ...base, nodes: 'a:0' }, /--nodes\.0: the ssh port must be from 1 to 65535/],
    [{ ...base, nodes: 'a,b:70000' }, /--nodes\.1: the ssh port must be from 1 to 65535/],
    [{ ...base, nodes: 'a', sshPort: '0x16' as never }, /--ssh-port: a port number: decimal digits/],
    [{ ...base, nodes: 'a', sshPort: ' 22 ' as never }, /--ssh-port: a port number: decimal digits/],
    [{ ...base, nodes: 'a', sshPort: '1e3' as never }, /--ssh-port: a port number: decimal digits/],
    [{ ...base, nodes: 'a', sshPort: '70000' as never }, /--ssh-port: a port from 1 to 65535/],
    [{ ...base, provider: 'external', endpoints: '127.0.0.1:0' }, /--endpoints\.0: the port must be from 1/],
    [
      { ...base, provider: 'external', endpoints: '127.0.0.1:2379,127.0.0.1:2379' },
      /--endpoints: each endpoint once/,
    ],
    [{ ...base, nodes: 'a', sshUser: 'a b' }, /--ssh-user: a user name/],
    [{ ...base, nodes: 'a', sshHostKeys: 'no' as never }, /--ssh-host-keys/],
    [{ ...base, nodes: 'a', sshKey: join(dir, 'missing') }, /--ssh-key: no such key file/],
    [{ ...base, provider: 'local', nodes: 'a' }, /--nodes: only with --provider ssh/],
    [{ ...base, provider: 'local', sshKey: key }, /--ssh-key: only with --provider ssh/],
  ])('refuses %o', (input, message) => {
    const text = problem(input as never);
    expect(text).toMatch(message);
    expect(text).not.toContain(SECRET);
  });

  it('refuses backends the ssh provider does not run, before anything starts', async () => {
    const options = (backend: string, nodes: string) =>
      parseRunOptions({ ...base, backend: backend as never, nodes, fencing: backend !== 'redlock' });
    expect(() =>
      validateRun(options('memory', 'a'), { name: 'memory', cluster: undefined } as never),
    ).toThrow(/memory runs no servers: --provider ssh does not apply/);
    const sentinel = await loadBackend('redis-sentinel');
    expect(() => validateRun(options('redis-sentinel', 'a,b,c'), sentinel)).toThrow(
      /which --provider ssh does not run/,
    );
    const redis = await loadBackend('redis');
    expect(() => validateRun(options('redis', 'a,b'), redis)).toThrow(/give one --nodes machine, got 2/);
    const etcd = await loadBackend('etcd');
    // One machine: no peer to cut, said before the run.
    expect(() => validateRun(parseRunOptions({ ...base, nodes: 'a', fault: 'partition' }), etcd)).toThrow(
      /partition cannot take effect on etcd: a single server has no peer/,
    );
    expect(() =>
      validateRun(parseRunOptions({ ...base, nodes: 'a,b,c', fault: 'partition,kill' }), etcd),
    ).not.toThrow();
  });

  it('suite --provider ssh: one partition, kill and pause cell per consensus backend, predicted ok', () => {
    expect(sshMatrix(true).map((e) => [e.options.backend, e.options.fault, e.expect])).toEqual([
      ['etcd', 'partition,kill,pause-server', 'ok'],
      ['zk', 'partition,kill,pause-server', 'ok'],
    ]);
  });

  it.each([
    [['run', '--backend', 'etcd', '--provider', 'ssh'], /--nodes: --provider ssh needs the machines/],
    [['run', '--backend', 'etcd', '--provider', 'ssh', '--nodes', 'a', '--ssh-port', 'x'], /--ssh-port/],
    [['run', '--backend', 'etcd', '--provider', 'ssh', '--nodes', 'a:0'], /--nodes\.0: the ssh port must be/],
    [
      ['run', '--backend', 'etcd', '--provider', 'external', '--endpoints', '127.0.0.1:2379,127.0.0.1:2379'],
      /--endpoints: each endpoint once/,
    ],
    [['suite', '--provider', 'ssh'], /--nodes: --provider ssh needs the machines/],
    [['suite', '--provider', 'local', '--nodes', 'a'], /--nodes: only with --provider ssh/],
  ])('the CLI exits 64 for %j, naming the flag', async (args, message) => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [cli, ...args, '--out', join(dir, 'out')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('exit', (code) => {
        clearTimeout(killer);
        resolve({ code, stderr });
      });
    });
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(message);
    // Refused before the run's directory is made.
    const out = join(dir, 'out');
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
  });
});
