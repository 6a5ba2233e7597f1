import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { serversImageTag } from '@fencekit/cluster';

const run = promisify(execFile);

/**
 * A second Docker engine on this machine, standing in for a remote one: its own dockerd (and the containerd it
 * manages), data root, exec root and pidfile under /tmp, its API on tcp://127.0.0.2:<port>, and the ports of its
 * containers published on 127.0.0.2 only (`--ip`), so a client that reached them on 127.0.0.1 would fail. It
 * leaves the host's firewall to the main engine (`--iptables=false`), has a default bridge of its own, takes its
 * networks from a range of its own, and gets the servers image copied from the main engine (`docker save | load`).
 *
 * Not `--bridge=none`: dockerd 20.10 started with it deletes the `docker0` interface (`removeDefaultBridgeInterface`),
 * which is the main engine's default bridge: its containers on the default network could no longer start. Seen
 * here on 2026-12-03 (restored by hand); the test now checks docker0 outlives the second engine.
 */
export interface SecondEngine {
  /** DOCKER_HOST for it. */
  readonly url: string;
  /** Where its published ports are. */
  readonly host: string;
  stop(): Promise<void>;
}

const HOST = '127.0.0.2';
/** Networks of the second engine: a range the main engine's pools do not use here. */
const POOL = '10.213.0.0/16';
/**
 * The host forwards bridged packets through iptables (br_netfilter) with a FORWARD policy of DROP, set by the main
 * engine; with `--iptables=false` the second engine adds no rule of its own, so its containers could not reach
 * each other. One rule for its range, tagged so a crashed run's copy is removed by the next.
 */
/** The second engine's default bridge, made and removed by us (dockerd uses an existing bridge it is given). */
export const BRIDGE = 'fke2br0';
const BRIDGE_ADDRESS = '10.214.0.1/24';
const RULE = [
  'FORWARD',
  '-s',
  POOL,
  '-d',
  POOL,
  '-m',
  'comment',
  '--comment',
  'fencekit-second-engine',
  '-j',
  'ACCEPT',
];

/** Why a second engine cannot run here (skip, saying so), or undefined when it can. */
export async function secondEngineUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'a second dockerd needs root';
  for (const tool of ['dockerd', 'iptables', 'containerd', 'ip']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed`;
    }
  }
  try {
    await run('docker', ['image', 'inspect', serversImageTag()], { timeout: 20_000, env: localEnv() });
  } catch {
    return `the main engine does not answer or has no ${serversImageTag()} image to copy`;
  }
  return undefined;
}

/** The environment of a `docker` talking to the main engine, whatever DOCKER_HOST says now. */
export function localEnv(): NodeJS.ProcessEnv {
  const { DOCKER_HOST: _ignored, ...env } = process.env;
  return env;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function ipLink(args: string[]): boolean {
  try {
    execFileSync('ip', ['link', ...args], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

function iptables(action: '-I' | '-D'): boolean {
  try {
    execFileSync('iptables', [action, ...RULE], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** Pids of processes whose command line names `dir` (the engine's containerd and its shims). */
export function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cmdline.includes(dir) || cwd.startsWith(dir)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Starts the second engine, bounded; on any failure what was started is stopped before the error is thrown. */
export async function startSecondEngine(): Promise<SecondEngine> {
  while (iptables('-D')) {
    // a crashed run's rule
  }
  ipLink(['del', BRIDGE]); // a crashed run's bridge, if any
  for (const args of [
    ['link', 'add', 'name', BRIDGE, 'type', 'bridge'],
    ['addr', 'add', BRIDGE_ADDRESS, 'dev', BRIDGE],
    ['link', 'set', BRIDGE, 'up'],
  ]) {
    execFileSync('ip', args, { stdio: 'ignore', timeout: 10_000 });
  }
  // Short: containerd's sockets live under the exec root, and unix socket paths are limited to 107 bytes.
  const dir = mkdtempSync('/tmp/fk-e2-');
  const port = await freePort(HOST);
  const url = `tcp://${HOST}:${port}`;
  const log = openSync(`${dir}/dockerd.log`, 'a');
  const daemon = spawn(
    'dockerd',
    [
      `--host=${url}`,
      `--data-root=${dir}/data`,
      `--exec-root=${dir}/x`,
      `--pidfile=${dir}/dockerd.pid`,
      `--bridge=${BRIDGE}`,
      '--iptables=false',
      `--ip=${HOST}`,
      `--default-address-pool=base=${POOL},size=24`,
      '--cgroup-parent=fencekit-second-engine',
      '--containerd-namespace=fencekit-second-engine',
      '--containerd-plugins-namespace=fencekit-second-engine-plugins',
    ],
    { stdio: ['ignore', log, log] },
  );
  closeSync(log);
  let ruled = false;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= stopEngine();
    return stopping;
  };
  const stopEngine = async () => {
    daemon.kill('SIGTERM');
    if (!(await exited(daemon, 30_000))) daemon.kill('SIGKILL');
    await exited(daemon, 10_000);
    // Whatever the daemon left (its containerd, shims after a SIGKILL) goes too, by pid.
    for (const pid of processesUnder(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (ruled) iptables('-D');
    // Mounts under the data root (overlay layers, network namespaces) a clean stop removes; a killed one may not.
    const mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[1] ?? '')
      .filter((target) => target.startsWith(dir))
      .reverse();
    for (const target of mounts) {
      try {
        execFileSync('umount', ['-l', target], { stdio: 'ignore', timeout: 10_000 });
      } catch {
        // not mounted any more
      }
    }
    rmSync(dir, { recursive: true, force: true });
    ipLink(['del', BRIDGE]);
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await run('docker', ['--host', url, 'info', '--format', '{{.ServerVersion}}'], { timeout: 10_000 });
        break;
      } catch (error) {
        if (daemon.exitCode !== null || Date.now() > deadline) {
          const tail = readFileSync(`${dir}/dockerd.log`, 'utf8').split('\n').slice(-15).join('\n');
          throw new Error(`the second dockerd did not answer on ${url}:\n${tail}`, { cause: error });
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    // ~1 GB; about a minute on this machine.
    await run(
      'sh',
      ['-c', `docker save "$1" | docker --host "$2" load`, 'copy-image', serversImageTag(), url],
      {
        timeout: 5 * 60_000,
        env: localEnv(),
        maxBuffer: 1 << 20,
      },
    );
    ruled = iptables('-I');
    if (!ruled) throw new Error(`could not add the iptables rule ${RULE.join(' ')}`);
    return { url, host: HOST, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
