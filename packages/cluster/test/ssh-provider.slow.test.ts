import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodesInUseError, SshConnectionError, startCluster } from '../src/index.js';
import { type SshNodeNetwork, sshNodesUnavailable, startSshNetwork } from './support/ssh-node.js';

/**
 * `startCluster({ provider: 'ssh' })` as a library user calls it, on three ssh nodes (containers of the project's
 * image with sshd, a Docker network of their own, keys made per run): the clock shim copied to the nodes moves a
 * ZooKeeper server's clock; a process that dies of SIGINT with faults in force (nobody else handling the signal)
 * leaves its nodes healed, stopped and wiped; a node that cannot be reached fails the start with a typed error and
 * leaves nothing on the others.
 */
const unavailable = await sshNodesUnavailable();
if (unavailable) console.warn(`[cluster] ssh provider tests SKIPPED: ${unavailable}`);

describe.skipIf(unavailable !== undefined)(
  `the ssh provider${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const dir = mkdtempSync('/tmp/fk-sshp-');
    let net: SshNodeNetwork;
    let ssh: { user: string; keyPath: string; hostKeys: 'accept-new'; knownHostsFile: string };
    beforeAll(async () => {
      net = await startSshNetwork(3, dir);
      ssh = {
        user: 'root',
        keyPath: net.keyFile,
        hostKeys: 'accept-new',
        knownHostsFile: net.knownHostsFile,
      };
    }, 6 * 60_000);
    afterAll(async () => {
      await net?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The ssh provider's control directories in /tmp (mkdtemp '/tmp/fk-ssh-'). */
    function controlDirsNow(): string[] {
      return readdirSync('/tmp').filter((d) => d.startsWith('fk-ssh-'));
    }

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

    it('a clock jump through the shim copied to the node moves that ZooKeeper server, and heals', async () => {
      const cluster = await startCluster({ topology: 'zookeeper', provider: 'ssh', nodes: net.hosts, ssh });
      try {
        await cluster.faults.clock('n2', { offsetMs: 60_000 });
        const started = await cluster.faults.observe({
          fault: 'clock',
          node: 'n2',
          phase: 'started',
          timeoutMs: 10_000,
        });
        expect(started.seen, started.detail).toBe(true);
        await cluster.faults.heal();
      } finally {
        await cluster.close();
      }
      expect(await leftovers()).toEqual([]);
    }, 180_000);

    it('a process that dies of SIGINT with a partition and a pause in force leaves every node clean', async () => {
      const script = `
import { startCluster } from '@fencekit/cluster';
const cluster = await startCluster({ topology: 'etcd', provider: 'ssh', nodes: ${JSON.stringify(net.hosts)}, ssh: ${JSON.stringify(ssh)} });
await cluster.faults.partition({ isolate: 'n1' });
await cluster.faults.pause('n2');
console.log('FAULTED');
setInterval(() => {}, 1000);
`;
      const controlDirsBefore = controlDirsNow();
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: new URL('..', import.meta.url).pathname,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const exit = new Promise<NodeJS.Signals | number | null>((resolve) =>
        child.once('exit', (code, signal) => resolve(signal ?? code)),
      );
      const killer = setTimeout(() => child.kill('SIGKILL'), 150_000);
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          if (String(d).includes('FAULTED')) resolve();
        });
        void exit.then(() => reject(new Error(`exited before faulting: ${stderr}`)));
      });
      expect((await leftovers()).length).toBeGreaterThan(0);
      child.kill('SIGINT');
      expect(await exit).toBe('SIGINT');
      clearTimeout(killer);
      expect(await leftovers()).toEqual([]);
      // Nor here: its ssh control directory (named on its stderr by nothing, so found by what it held) is gone.
      expect(controlDirsNow().filter((d) => !controlDirsBefore.includes(d))).toEqual([]);
    }, 180_000);

    it('redis-independent: one Redis per node, killed and restarted there, latency through the proxy here', async () => {
      const cluster = await startCluster({
        topology: 'redis-independent',
        provider: 'ssh',
        nodes: net.hosts,
        ssh,
        proxy: true,
      });
      try {
        expect(cluster.endpoints).toHaveLength(3);
        await cluster.faults.kill('n3');
        expect((await cluster.faults.observe({ fault: 'kill', node: 'n3', phase: 'started' })).seen).toBe(
          true,
        );
        await cluster.faults.latency('n1', { ms: 200 });
        const slow = await cluster.faults.observe({ fault: 'latency', node: 'n1', phase: 'started' });
        expect(slow.seen, slow.detail).toBe(true);
        await cluster.faults.heal();
        expect((await cluster.faults.observe({ fault: 'kill', node: 'n3', phase: 'healed' })).seen).toBe(
          true,
        );
      } finally {
        await cluster.close();
      }
      expect(await leftovers()).toEqual([]);
    }, 180_000);

    it("a second start on a live run's nodes fails with NodesInUseError naming it, the live run untouched", async () => {
      const live = await startCluster({ topology: 'etcd', provider: 'ssh', nodes: net.hosts, ssh });
      try {
        const runId = (live as unknown as { runId: string }).runId;
        const error = await startCluster({ topology: 'etcd', provider: 'ssh', nodes: net.hosts, ssh }).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(NodesInUseError);
        expect((error as NodesInUseError).runs).toEqual([runId]);
        // The live run's servers, and its directory only, are still there on every node.
        for (let i = 0; i < net.hosts.length; i++) {
          expect(await net.exec(i, 'pgrep -x etcd > /dev/null && echo up; ls /var/lib/fencekit')).toBe(
            `up\n${runId}\n`,
          );
        }
      } finally {
        await live.close();
      }
      expect(await leftovers()).toEqual([]);
    }, 180_000);

    it('a node that cannot be reached fails the start with SshConnectionError, the others left clean', async () => {
      const error = await startCluster({
        topology: 'etcd',
        provider: 'ssh',
        nodes: [net.hosts[0]!, net.hosts[1]!, '127.0.0.1:1'],
        ssh,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SshConnectionError);
      expect(await leftovers()).toEqual([]);
      // The nodes that answered got no master connection left open here (their opening outlived the failure).
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // pgrep itself, not through sh (whose own command line would match); exit 1 means none.
      const masters = await promisify(execFile)('pgrep', [
        '-a',
        '-P',
        String(process.pid),
        '-f',
        'ControlMaster=yes',
      ]).then(
        (r) => r.stdout.trim(),
        (e: { code?: number; stdout?: string }) => (e.code === 1 ? '' : `pgrep failed: ${e.stdout}`),
      );
      expect(masters).toBe('');
    }, 120_000);
  },
);
