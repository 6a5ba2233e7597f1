import { execFile } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InvalidArgumentError } from '@fencekit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { clockShimPath } from '../src/native.js';
import { resolveOptions } from '../src/options.js';
import { resolveSsh } from '../src/ssh/options.js';
import {
  cutScript,
  healLinksScript,
  SWEEP_IN_USE,
  shimCheckScript,
  startScript,
  sweepScript,
} from '../src/ssh/scripts.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'fk-ssh-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(f: () => unknown): InvalidArgumentError {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  throw new Error('not refused');
}

/** The ssh provider's option checks and the scripts it runs on nodes, without a node (`npm test`). */
describe('ssh provider options', () => {
  it('turns host[:port] nodes into ssh targets, the servers reached at the host', () => {
    const key = join(dir, 'key');
    writeFileSync(key, 'PRIVATE KEY MATERIAL\n');
    const ssh = resolveSsh('etcd', ['10.0.0.1', 'node-b.lan:2222', '10.0.0.3'], {
      user: 'deploy',
      keyPath: key,
      port: 22,
    });
    expect(ssh.hosts).toEqual(['10.0.0.1', 'node-b.lan', '10.0.0.3']);
    expect(ssh.targets[1]).toEqual({ host: 'node-b.lan', port: 2222, user: 'deploy', keyFile: key });
    expect(ssh.targets[0]!.port).toBe(22);
    expect(ssh.baseDir).toBe('/var/lib/fencekit');
    expect(ssh.runId).toMatch(/^fk-\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(resolveOptions({ topology: 'zookeeper', provider: 'ssh', nodes: ['a', 'b', 'c'] })).toMatchObject({
      nodes: 3,
      provider: 'ssh',
    });
  });

  it.each([
    [['root@host'], undefined, 'nodes[0]'],
    [['host:0'], undefined, 'nodes[0] port'],
    [['host:70000'], undefined, 'nodes[0] port'],
    [['a', 'a:2222'], undefined, 'nodes[1]'],
    [['[::1]'], undefined, 'nodes[0]'],
    [['a; rm -rf /'], undefined, 'nodes[0]'],
    [[], undefined, 'nodes'],
    [['a'], { user: 'a b' }, 'ssh.user'],
    [['a'], { port: 'x' }, 'ssh.port'],
    [['a'], { baseDir: '/' }, 'ssh.baseDir'],
    [['a'], { baseDir: 'var/lib/x' }, 'ssh.baseDir'],
    [['a'], { baseDir: '/var/lib/fence kit' }, 'ssh.baseDir'],
    [['a'], { hostKeys: 'off' }, 'ssh.hostKeys'],
  ])('refuses nodes %o with %o naming %s', (nodes, ssh, field) => {
    expect(refusal(() => resolveSsh('etcd', nodes, ssh as never)).argument).toBe(field);
  });

  it('refuses what the provider cannot run, and ssh options on other providers', () => {
    expect(refusal(() => resolveSsh('redis-sentinel', ['a', 'b', 'c'], {})).argument).toBe('topology');
    expect(refusal(() => resolveSsh('redis', ['a', 'b'], {})).argument).toBe('nodes');
    expect(refusal(() => resolveOptions({ topology: 'etcd', provider: 'ssh', nodes: 3 })).argument).toBe(
      'nodes',
    );
    expect(refusal(() => resolveOptions({ topology: 'etcd', ssh: { user: 'x' } })).argument).toBe('ssh');
  });

  it('names a missing key by its path only', () => {
    const error = refusal(() => resolveSsh('etcd', ['a'], { keyPath: join(dir, 'absent') }));
    expect(error.argument).toBe('ssh.keyPath');
    expect(error.message).toContain('absent');
  });
});

/**
 * A fake iptables keeping its rules in a file and printing them as iptables-nft does (`-S` quotes every
 * comment): what the heal parses. The first heal missed exactly that quoting and left the partition in place.
 */
function fakeIptables(rules: string[]): { env: NodeJS.ProcessEnv; rules: () => string[] } {
  const bin = mkdtempSync(join(dir, 'bin-'));
  const file = join(bin, 'rules');
  writeFileSync(file, rules.map((r) => `${r}\n`).join(''));
  writeFileSync(
    join(bin, 'iptables'),
    `#!/bin/sh
[ "$1" = -w ] && shift
case "$1" in
  -S) cat "${file}";;
  -D) shift; rule="-A $*"
      awk -v r="$rule" '{ l = $0; gsub(/"/, "", l); if (l != r) print }' "${file}" > "${file}.new" && mv "${file}.new" "${file}";;
  -I) shift; chain=$1; shift; echo "-A $chain $*" | sed 's/--comment \\([^ ]*\\)/--comment "\\1"/' >> "${file}";;
esac
`,
  );
  chmodSync(join(bin, 'iptables'), 0o755);
  return {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    rules: () => readFileSync(file, 'utf8').split('\n').filter(Boolean),
  };
}

describe('ssh provider scripts', () => {
  const ours = [
    '-A INPUT -s 172.21.0.3/32 -m comment --comment "fencekit:fk-1" -j DROP',
    '-A OUTPUT -d 172.21.0.3/32 -m comment --comment "fencekit:fk-1" -j DROP',
  ];
  const theirs = '-A INPUT -s 10.9.9.9/32 -m comment --comment "ops: keep" -j ACCEPT';
  const older = '-A INPUT -s 172.21.0.4/32 -m comment --comment "fencekit:fk-0" -j DROP';

  it("a heal removes this run's rules (as iptables -S quotes them), no other", async () => {
    const fake = fakeIptables(['-P INPUT ACCEPT', ...ours, theirs, older]);
    const { stdout } = await run('sh', ['-c', healLinksScript('fk-1')], { env: fake.env });
    expect(stdout.split('\n').filter((l) => l.startsWith('rule ')).length).toBe(2);
    expect(fake.rules()).toEqual(['-P INPUT ACCEPT', theirs, older]);
  });

  it('a heal that leaves a rule fails instead of reporting success', async () => {
    const fake = fakeIptables([...ours]);
    // An iptables that lists rules but cannot delete them.
    const env = { ...fake.env, PATH: `${mkdtempSync(join(dir, 'ro-'))}:${fake.env.PATH}` };
    writeFileSync(
      join(env.PATH!.split(':')[0]!, 'iptables'),
      `#!/bin/sh\n[ "$2" = -S ] && printf '%s\\n' '${ours[0]}'\nexit 0\n`,
    );
    chmodSync(join(env.PATH!.split(':')[0]!, 'iptables'), 0o755);
    await expect(run('sh', ['-c', healLinksScript('fk-1')], { env })).rejects.toMatchObject({ code: 1 });
  });

  it("a later run's sweep removes every fencekit rule and run dir of runs whose mark is stale or missing", async () => {
    const fake = fakeIptables([...ours, theirs, older]);
    const base = mkdtempSync(join(dir, 'base-'));
    mkdirSync(join(base, 'fk-0'));
    mkdirSync(join(base, 'fk-1'));
    writeFileSync(join(base, 'fk-1', 'alive'), '');
    const old = Date.now() / 1000 - 31;
    utimesSync(join(base, 'fk-1', 'alive'), old, old);
    // Never this host's /proc: it shows the servers of any ssh test nodes running here, which a sweep would kill.
    const { stdout } = await run('sh', ['-c', sweepScript(base, 'fk-2', mkdtempSync(join(dir, 'proc-')))], {
      env: fake.env,
    });
    expect(fake.rules()).toEqual([theirs]);
    expect(stdout.split('\n').filter((l) => l.startsWith('rule ')).length).toBe(3);
    expect(readdirSync(base)).toEqual(['fk-2']);
    expect(readdirSync(join(base, 'fk-2'))).toEqual(['alive']);
  });

  it('a sweep leaves a live run (fresh mark) untouched and names it, exiting SWEEP_IN_USE', async () => {
    const fake = fakeIptables([...ours, theirs, older]);
    const base = mkdtempSync(join(dir, 'base-'));
    mkdirSync(join(base, 'fk-1'));
    writeFileSync(join(base, 'fk-1', 'alive'), '');
    writeFileSync(join(base, 'fk-1', 'server.pid'), '1');
    mkdirSync(join(base, 'fk-0'));
    const error = await run('sh', ['-c', sweepScript(base, 'fk-2', mkdtempSync(join(dir, 'proc-')))], {
      env: fake.env,
    }).catch((e: { code: number; stdout: string }) => e);
    expect(error).toMatchObject({ code: SWEEP_IN_USE, stdout: 'live fk-1\n' });
    expect(fake.rules()).toEqual([...ours, theirs, older]);
    expect(readdirSync(base).sort()).toEqual(['fk-0', 'fk-1', 'fk-2']);
    expect(readdirSync(join(base, 'fk-1')).sort()).toEqual(['alive', 'server.pid']);
  });

  it('a cut tags both directions for every address of each peer, quoting what it is given', async () => {
    const fake = fakeIptables([]);
    await run('sh', ['-c', cutScript('fk-1', ['127.0.0.1'])], { env: fake.env });
    expect(fake.rules()).toEqual([
      '-A INPUT -s 127.0.0.1 -m comment --comment "fencekit:fk-1" -j DROP',
      '-A OUTPUT -d 127.0.0.1 -m comment --comment "fencekit:fk-1" -j DROP',
    ]);
    expect(cutScript('fk-1', ["a'b"])).toContain(`'a'\\''b'`);
  });

  it.skipIf(!clockShimPath())(
    'tries the shim with the loader, and names a machine type it was not built for',
    async () => {
      const shim = clockShimPath()!;
      const arch = (await run('uname', ['-m'])).stdout.trim();
      expect((await run('sh', ['-c', shimCheckScript(shim, arch)])).stdout.trim()).toBe('ok');
      expect((await run('sh', ['-c', shimCheckScript(shim, 'sparc64')])).stdout.trim()).toBe(
        `the node is ${arch}, the shim was built for sparc64`,
      );
      const bogus = join(dir, 'not-a-library.so');
      writeFileSync(bogus, 'not an ELF file');
      expect((await run('sh', ['-c', shimCheckScript(bogus, arch)])).stdout).toMatch(
        /loader refuses the shim/,
      );
    },
  );

  it('starts a server in its own session, tagged with the run, arguments quoted', () => {
    const script = startScript(
      '/var/lib/fencekit/fk-1',
      'fk-1',
      'server',
      { command: 'etcd', args: ['--name=n1', "--x=it's"] },
      {},
    );
    expect(script).toContain("setsid env FENCEKIT_RUN='fk-1' 'etcd' '--name=n1' '--x=it'\\''s'");
    expect(script).toContain("echo $! > '/var/lib/fencekit/fk-1/server.pid'");
  });
});
