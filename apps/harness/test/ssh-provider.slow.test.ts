import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SshNodeNetwork,
  sshNodesUnavailable,
  startSshNetwork,
} from '../../../packages/cluster/test/support/ssh-node.js';
import type { RunMeta } from '../src/index.js';
import { reportsDir } from './support/runs.js';

/**
 * Issue #18's "done when": `fencekit run --provider ssh` against three machines reached over real ssh (containers of
 * the project's image with sshd, on a network of their own, a key made for this run) gives the verdicts the local
 * provider gives for an etcd and a ZooKeeper cell under partition, kill and pause; afterwards no fencekit iptables
 * rule, stopped process or server is left on any node. A Ctrl-C in the middle of a fault heals it on every node, and
 * a later start heals what a killed run left.
 */
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const out = reportsDir();
const unavailable = await sshNodesUnavailable();
if (unavailable) console.warn(`[harness] ssh provider tests SKIPPED: ${unavailable}`);

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI, bounded; `interruptAfter` sends SIGINT to its process group (as a terminal's Ctrl-C) when it is seen. */
function fencekit(args: string[], options: { boundMs?: number; interruptOn?: RegExp } = {}): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (options.interruptOn && !interrupted && options.interruptOn.test(stderr)) {
        interrupted = true;
        process.kill(-child.pid!, 'SIGINT');
      }
    });
    const killer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), options.boundMs ?? 240_000);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(unavailable !== undefined)(
  `--provider ssh against three ssh nodes${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const dir = mkdtempSync('/tmp/fk-ssh-e2e-');
    let net: SshNodeNetwork;
    let login: string[];
    beforeAll(async () => {
      net = await startSshNetwork(3, dir);
      login = [
        '--nodes',
        net.hosts.join(','),
        '--ssh-user',
        'root',
        '--ssh-key',
        net.keyFile,
        '--ssh-host-keys',
        'accept-new',
        '--ssh-known-hosts',
        net.knownHostsFile,
      ];
    }, 6 * 60_000);
    afterAll(async () => {
      await net?.stop();
      rmSync(dir, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    });

    /** What fencekit could have left on each node: its rules, its processes (any state), its run dirs. */
    async function leftovers(): Promise<string[]> {
      const found: string[] = [];
      for (let i = 0; i < net.hosts.length; i++) {
        const report = await net.exec(
          i,
          `iptables -w -S | grep fencekit || true
for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$e" 2> /dev/null | grep -q '^FENCEKIT_RUN=' && echo "process \${e#/proc/}"; done
ps -eo stat=,comm= | awk '$1 ~ /^T/ {print "stopped " $2}'
ls /var/lib/fencekit 2> /dev/null | sed 's/^/dir /'`,
        );
        for (const line of report.split('\n').filter(Boolean)) found.push(`n${i + 1}: ${line}`);
      }
      return found;
    }

    const cell = (backend: string, provider: string[]) => [
      'run',
      '--backend',
      backend,
      '--workload',
      'inventory',
      '--fault',
      'partition,kill,pause-server',
      '--clients',
      '4',
      '--time',
      '15s',
      '--seed',
      '7',
      '--out',
      out,
      '--json',
      ...provider,
    ];

    for (const backend of ['etcd', 'zk']) {
      it(`${backend}: the same verdict as the local provider, every fault applied on the nodes, nothing left`, async () => {
        const ssh = await fencekit(cell(backend, ['--provider', 'ssh', ...login]));
        const sshRun = JSON.parse(ssh.stdout || '{}') as { verdict: string; dir: string; meta: RunMeta };
        expect(ssh.code, `${JSON.stringify(sshRun.meta?.problems)}\n${ssh.stderr.slice(-3_000)}`).toBe(0);
        const local = await fencekit(cell(backend, ['--provider', 'local']));
        expect(local.code, local.stderr.slice(-3_000)).toBe(0);
        const localRun = JSON.parse(local.stdout) as { verdict: string };
        console.log(`[harness] ${backend}: ssh ${sshRun.verdict}, local ${localRun.verdict}`);
        expect(sshRun.verdict).toBe('ok');
        expect(localRun.verdict).toBe(sshRun.verdict);
        expect(sshRun.meta.provider).toBe('ssh');
        const applied = new Set(sshRun.meta.faultsApplied.filter((f) => f.applied).map((f) => f.fault));
        expect([...applied].sort(), JSON.stringify(sshRun.meta.faultsApplied)).toEqual([
          'kill',
          'partition',
          'pause-server',
        ]);
        // Each node's log and configuration came home into the run's directory.
        for (const id of ['n1', 'n2', 'n3']) {
          expect(existsSync(join(sshRun.dir, 'nodes', id, 'server.log'))).toBe(true);
          expect(readFileSync(join(sshRun.dir, 'nodes', id, 'command.txt'), 'utf8')).toMatch(
            backend === 'etcd' ? /etcd/ : /QuorumPeerMain/,
          );
        }
        expect(await leftovers()).toEqual([]);
      }, 300_000);
    }

    it('Ctrl-C while a fault is in force heals it on every node before the exit', async () => {
      const result = await fencekit(
        [
          'run',
          '--backend',
          'etcd',
          '--workload',
          'inventory',
          '--fault',
          'partition,pause-server',
          '--time',
          '60s',
          '--out',
          out,
          '--provider',
          'ssh',
          '--json',
          ...login,
        ],
        // The progress line the nemesis prints as it applies a fault (the run id names the faults too).
        { interruptOn: /nemesis: (partition|pause-server) on/ },
      );
      expect(result.stderr).toMatch(/interrupted: healing faults/);
      expect(await leftovers()).toEqual([]);
      // The graceful teardown still had the servers' logs to copy: the interrupt healed, it did not wipe first.
      const { dir: runDir } = JSON.parse(result.stdout) as { dir: string };
      for (const id of ['n1', 'n2', 'n3'])
        expect(
          readFileSync(join(runDir, 'nodes', id, 'server.log'), 'utf8'),
          `${id}\n${result.stderr.slice(-4_000)}`,
        ).toMatch(/"level":"info"/);
    }, 240_000);

    it('suite --short --provider ssh: one cell per consensus backend, both as predicted (ok)', async () => {
      const result = await fencekit(
        ['suite', '--short', '--provider', 'ssh', '--out', out, '--json', ...login],
        {
          boundMs: 400_000,
        },
      );
      const suite = JSON.parse(result.stdout || '{}') as {
        agrees: boolean;
        runs: { backend: string; verdict: string | null; error: string | null }[];
      };
      expect(result.code, result.stderr.slice(-3_000)).toBe(0);
      expect(suite.runs.map((r) => [r.backend, r.verdict])).toEqual([
        ['etcd', 'ok'],
        ['zk', 'ok'],
      ]);
      expect(suite.agrees).toBe(true);
      expect(await leftovers()).toEqual([]);
    }, 420_000);

    it('a later start heals what a killed run left (a tagged rule, a stopped server) and says so', async () => {
      await net.exec(
        0,
        `iptables -w -I INPUT -s ${net.hosts[1]} -m comment --comment fencekit:fk-old -j DROP
mkdir -p /var/lib/fencekit/fk-old
setsid env FENCEKIT_RUN=fk-old sleep 600 < /dev/null > /dev/null 2>&1 &
sleep 0.2; pkill -STOP -x sleep`,
      );
      expect((await leftovers()).length).toBeGreaterThanOrEqual(3);
      const result = await fencekit(cell('etcd', ['--provider', 'ssh', ...login]));
      expect(result.stderr).toMatch(
        /n1 .*healed leftovers of an earlier run: 1 iptables rule\(s\) removed, 1 stopped process\(es\) resumed, 1 server\(s\) killed, 1 run dir\(s\) wiped/,
      );
      expect(result.code, result.stderr.slice(-3_000)).toBe(0);
      expect(await leftovers()).toEqual([]);
    }, 240_000);
  },
);
