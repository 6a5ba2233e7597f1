import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serversImageTag } from '@fencekit/cluster';

const run = promisify(execFile);
const ARCHIVES = '/var/cache/apt/archives';
const LIBNSL = '/lib/x86_64-linux-gnu/libnsl.so.2';

/**
 * Nodes for the ssh tests: containers of the project's servers image with an sshd added. The image has no apt
 * lists and tests reach no network, so sshd comes from this machine's Debian package cache (openssh-server and
 * libwrap0 unpacked, plus the host's libnsl2, all bookworm like the image), built with `--network none`.
 */
function debs(): string[] | undefined {
  if (!existsSync(ARCHIVES)) return undefined;
  const files = readdirSync(ARCHIVES);
  const found = [/^openssh-server_.*_amd64\.deb$/, /^libwrap0_.*_amd64\.deb$/].map((re) =>
    files.find((f) => re.test(f)),
  );
  return found.every((f) => f !== undefined) ? found.map((f) => join(ARCHIVES, f!)) : undefined;
}

export const sshImageTag = () => `fencekit/servers-ssh:${serversImageTag().split(':')[1]}`;

/** Why ssh nodes cannot be made here (the tests skip, saying so), or undefined. */
export async function sshNodesUnavailable(): Promise<string | undefined> {
  try {
    await run('docker', ['image', 'inspect', serversImageTag()], { timeout: 20_000 });
  } catch {
    return `no Docker engine answers, or it has no ${serversImageTag()} image`;
  }
  for (const tool of ['ssh', 'ssh-keygen']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      return `${tool} is not installed here (openssh-client)`;
    }
  }
  if (!debs() || !existsSync(LIBNSL))
    return `openssh-server and libwrap0 .debs in ${ARCHIVES} and ${LIBNSL} are needed`;
  return undefined;
}

const SSHD_CONFIG = `Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AuthorizedKeysFile /root/.ssh/authorized_keys
PidFile /run/sshd.pid
MaxSessions 64
MaxStartups 64
`;

/** Builds the ssh image once (idempotent: skipped when the tag exists), bounded. */
export async function ensureSshImage(): Promise<string> {
  const tag = sshImageTag();
  try {
    await run('docker', ['image', 'inspect', tag], { timeout: 20_000 });
    return tag;
  } catch {
    // build it
  }
  const context = mkdtempSync(join(tmpdir(), 'fencekit-ssh-image-'));
  try {
    const rootfs = join(context, 'rootfs');
    for (const deb of debs() ?? []) await run('dpkg-deb', ['-x', deb, rootfs], { timeout: 60_000 });
    // The image is merged-/usr (/lib is a link to usr/lib): a real lib/ in the copy would replace the link.
    await run('sh', [
      '-c',
      'if [ -d "$1/lib" ]; then cp -a "$1/lib/." "$1/usr/lib/" && rm -rf "$1/lib"; fi',
      'merge',
      rootfs,
    ]);
    mkdirSync(join(rootfs, 'usr/lib/x86_64-linux-gnu'), { recursive: true });
    mkdirSync(join(rootfs, 'etc/ssh'), { recursive: true });
    copyFileSync(LIBNSL, join(rootfs, 'usr/lib/x86_64-linux-gnu/libnsl.so.2'));
    writeFileSync(join(rootfs, 'etc/ssh/sshd_config'), SSHD_CONFIG);
    writeFileSync(
      join(context, 'Dockerfile'),
      `FROM ${serversImageTag()}
COPY rootfs/ /
RUN ldconfig && (id sshd > /dev/null 2>&1 || useradd --system --no-create-home --home-dir /run/sshd --shell /usr/sbin/nologin sshd) \\
 && mkdir -p /run/sshd /root/.ssh && chmod 700 /root/.ssh && /usr/sbin/sshd -t -f /etc/ssh/sshd_config 2>&1 | grep -v 'no hostkeys' || true
CMD ["/usr/sbin/sshd", "-D", "-e"]
`,
    );
    await run('docker', ['build', '--network', 'none', '-t', tag, context], {
      timeout: 5 * 60_000,
      maxBuffer: 16 << 20,
    });
    return tag;
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

export interface SshNode {
  readonly containerId: string;
  /** sshd's port, published on 127.0.0.1. */
  readonly port: number;
  /** The per-run client key accepted by the node (and only by it). */
  readonly keyFile: string;
  stop(): Promise<void>;
}

/** A key pair made for this run (ed25519, no passphrase) in `dir`. */
export async function makeKey(dir: string, name: string): Promise<string> {
  const file = join(dir, name);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `fencekit-test-${name}`, '-f', file], {
    timeout: 20_000,
  });
  return file;
}

/** One node: a container with sshd on a published loopback port, its host key and the run's client key. */
export async function startSshNode(image: string, dir: string, clientKey: string): Promise<SshNode> {
  const hostKey = await makeKey(dir, `host-${Math.random().toString(16).slice(2, 8)}`);
  const { stdout } = await run(
    'docker',
    [
      'create',
      '--init',
      '--cap-add',
      'NET_ADMIN',
      '--label',
      'fencekit.cluster=ssh-test-node',
      '--label',
      `fencekit.owner=${hostname()}:${process.pid}`,
      '-p',
      '127.0.0.1::22',
      image,
    ],
    { timeout: 60_000 },
  );
  const id = stdout.trim();
  const stop = async () => {
    await run('docker', ['rm', '-f', id], { timeout: 60_000 }).catch(() => undefined);
  };
  try {
    await run('docker', ['cp', hostKey, `${id}:/etc/ssh/ssh_host_ed25519_key`], { timeout: 30_000 });
    await run('docker', ['cp', `${clientKey}.pub`, `${id}:/root/.ssh/authorized_keys`], { timeout: 30_000 });
    await run('docker', ['start', id], { timeout: 60_000 });
    const port = await run('docker', ['port', id, '22/tcp'], { timeout: 20_000 });
    const match = /127\.0\.0\.1:(\d+)/.exec(port.stdout);
    if (!match) throw new Error(`no published ssh port: ${port.stdout}`);
    return { containerId: id, port: Number(match[1]), keyFile: clientKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface SshNodeNetwork {
  /** Each node's address on the network: what `--nodes` names (ssh on port 22, servers on their own ports). */
  readonly hosts: readonly string[];
  readonly containerIds: readonly string[];
  /** The run's client key, accepted by every node. */
  readonly keyFile: string;
  /** Where ssh records the nodes' host keys (`hostKeys: 'accept-new'`). */
  readonly knownHostsFile: string;
  /** Runs a command in node i's container (for checks that must not go through the provider under test). */
  exec(i: number, script: string): Promise<string>;
  /** Removes the containers and the network. */
  stop(): Promise<void>;
}

/**
 * `count` ssh nodes on a Docker network of their own, reached from here at their network addresses (the host
 * routes to its bridges), as machines on a LAN would be: each runs its servers on the standard ports.
 */
export async function startSshNetwork(count: number, dir: string): Promise<SshNodeNetwork> {
  const image = await ensureSshImage();
  const clientKey = await makeKey(dir, `client-${Math.random().toString(16).slice(2, 8)}`);
  const name = `fencekit-ssh-${process.pid}-${Math.random().toString(16).slice(2, 8)}`;
  const owner = `${hostname()}:${process.pid}`;
  await run(
    'docker',
    [
      'network',
      'create',
      '--label',
      'fencekit.cluster=ssh-test-node',
      '--label',
      `fencekit.owner=${owner}`,
      name,
    ],
    {
      timeout: 60_000,
    },
  );
  const ids: string[] = [];
  const stop = async () => {
    if (ids.length > 0)
      await run('docker', ['rm', '-f', ...ids], { timeout: 120_000 }).catch(() => undefined);
    await run('docker', ['network', 'rm', name], { timeout: 60_000 }).catch(() => undefined);
  };
  try {
    for (let i = 0; i < count; i++) {
      const hostKey = await makeKey(dir, `host-${Math.random().toString(16).slice(2, 8)}`);
      const { stdout } = await run(
        'docker',
        [
          'create',
          '--init',
          '--cap-add',
          'NET_ADMIN',
          '--network',
          name,
          '--label',
          'fencekit.cluster=ssh-test-node',
          '--label',
          `fencekit.owner=${owner}`,
          image,
        ],
        { timeout: 60_000 },
      );
      const id = stdout.trim();
      ids.push(id);
      await run('docker', ['cp', hostKey, `${id}:/etc/ssh/ssh_host_ed25519_key`], { timeout: 30_000 });
      await run('docker', ['cp', `${clientKey}.pub`, `${id}:/root/.ssh/authorized_keys`], {
        timeout: 30_000,
      });
      await run('docker', ['start', id], { timeout: 60_000 });
    }
    const hosts: string[] = [];
    for (const id of ids) {
      const { stdout } = await run(
        'docker',
        ['inspect', '-f', `{{(index .NetworkSettings.Networks "${name}").IPAddress}}`, id],
        { timeout: 20_000 },
      );
      hosts.push(stdout.trim());
    }
    // sshd writes its pid file once it listens: wait (bounded) for each.
    for (const id of ids) {
      await run(
        'sh',
        [
          '-c',
          'i=0; until docker exec "$1" test -s /run/sshd.pid || [ $i -ge 60 ]; do sleep 0.5; i=$((i+1)); done',
          'wait',
          id,
        ],
        { timeout: 60_000 },
      );
    }
    return {
      hosts,
      containerIds: ids,
      keyFile: clientKey,
      knownHostsFile: join(dir, 'known_hosts'),
      exec: async (i, script) =>
        (await run('docker', ['exec', ids[i]!, 'sh', '-c', script], { timeout: 30_000 })).stdout,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
