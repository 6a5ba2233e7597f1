import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
/** Shipped inside the package (files in package.json), so an installed @fencekit/cluster builds its image too. */
const DOCKERFILE = `${packageRoot}images/servers/Dockerfile`;
const BUILD_SCRIPT = `${packageRoot}scripts/build-image.sh`;

/** Every container and network we create carries these, so leftovers of a dead run can be found and removed. */
export const LABEL = 'fencekit.cluster';
export const OWNER_LABEL = 'fencekit.owner';

/** This process, as recorded on what it creates: host and pid, so a sweep never touches a live run's containers. */
export const OWNER = `${hostname()}:${process.pid}`;

/**
 * The engine `docker` and testcontainers talk to: `DOCKER_HOST` when it names a host (`tcp://`, `http(s)://`,
 * `ssh://`), so that a second engine elsewhere runs the containers; this machine's socket otherwise (unset,
 * `unix://`, `npipe://`). `host` is where the engine publishes containers' ports.
 */
export function dockerEngine(env: NodeJS.ProcessEnv = process.env): { remote: boolean; host: string } {
  const value = env.DOCKER_HOST?.trim();
  if (!value || /^(unix|npipe|fd):/i.test(value)) return { remote: false, host: '127.0.0.1' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(
      `DOCKER_HOST=${JSON.stringify(value)} is not a URL such as tcp://host:2375 or unix:///var/run/docker.sock`,
    );
  }
  if (!/^(tcp|https?|ssh):$/i.test(url.protocol) || url.hostname === '') {
    throw new Error(
      `DOCKER_HOST=${JSON.stringify(value)}: fencekit knows tcp://, http(s)://, ssh:// and unix:// engines`,
    );
  }
  return { remote: true, host: url.hostname.replace(/^\[(.*)\]$/, '$1') };
}

/** `host:port`, an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Where the containers' published ports are reached: `TESTCONTAINERS_HOST_OVERRIDE` when the caller set one, else
 * the engine's host (loopback for this machine's engine).
 */
export function publishedPortsHost(): string {
  return process.env.TESTCONTAINERS_HOST_OVERRIDE?.trim() || dockerEngine().host;
}

/**
 * Facts of this machine (see issue 3): the Ryuk reaper image cannot be pulled, and testcontainers believes it runs
 * in a container and would hand out the bridge gateway instead of loopback. Set before testcontainers loads. A
 * remote engine (`DOCKER_HOST=tcp://…`) publishes its ports on its own host: that host is the override then.
 */
export function configureTestcontainers(): void {
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= dockerEngine().host;
}

/** True when a Docker engine answers within `timeoutMs`. */
export async function dockerAvailable(timeoutMs = 5000): Promise<boolean> {
  try {
    await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: timeoutMs });
    return true;
  } catch {
    return false;
  }
}

/** The tag build-image.sh gives the servers image: the first 12 hex digits of the Dockerfile's sha256. */
export function serversImageTag(): string {
  const hash = createHash('sha256').update(readFileSync(DOCKERFILE)).digest('hex').slice(0, 12);
  return `fencekit/servers:${hash}`;
}

/** Makes sure the servers image exists, running build-image.sh (idempotent; minutes on a cold machine) if not. */
export async function ensureServersImage(timeoutMs = 15 * 60_000): Promise<string> {
  const tag = serversImageTag();
  try {
    await run('docker', ['image', 'inspect', tag], { timeout: 10_000 });
    return tag;
  } catch {
    process.stderr.write(`[fencekit/cluster] image ${tag} missing: running ${BUILD_SCRIPT}\n`);
    await run('bash', [BUILD_SCRIPT], { timeout: timeoutMs, maxBuffer: 64 << 20 });
    return tag;
  }
}

function ownerAlive(owner: string): boolean {
  const [host, pid] = owner.split(':');
  if (host !== hostname()) return true; // not ours to judge
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes containers and networks left by fencekit runs whose process is gone. Never touches live runs. */
export async function sweepLeftovers(): Promise<void> {
  const list = async (kind: 'container' | 'network') => {
    const args =
      kind === 'container'
        ? ['ps', '-a', '--filter', `label=${LABEL}`, '--format', `{{.ID}} {{.Label "${OWNER_LABEL}"}}`]
        : ['network', 'ls', '--filter', `label=${LABEL}`, '--format', `{{.ID}} {{.Label "${OWNER_LABEL}"}}`];
    const { stdout } = await run('docker', args, { timeout: 20_000 });
    return stdout
      .split('\n')
      .map((line) => line.trim().split(' '))
      .filter(([id, owner]) => id && owner !== undefined && !ownerAlive(owner))
      .map(([id]) => id!);
  };
  const containers = await list('container');
  if (containers.length > 0) await run('docker', ['rm', '-f', ...containers], { timeout: 60_000 });
  const networks = await list('network');
  if (networks.length > 0)
    await run('docker', ['network', 'rm', ...networks], { timeout: 60_000 }).catch(() => {});
}

/** Synchronous removal for exit handlers, where nothing async runs any more. */
export function removeNow(containers: readonly string[], networks: readonly string[]): void {
  if (containers.length > 0)
    spawnSync('docker', ['rm', '-f', ...containers], { timeout: 20_000, stdio: 'ignore' });
  if (networks.length > 0)
    spawnSync('docker', ['network', 'rm', ...networks], { timeout: 20_000, stdio: 'ignore' });
}

/**
 * The host pid of a container's init, for nsenter; undefined when not root, nsenter is missing, the engine is
 * remote (`DOCKER_HOST`), or FENCEKIT_DOCKER_EXEC=1 asks for `docker exec` instead.
 */
export function nsenterPid(containerId: string): number | undefined {
  if (process.getuid?.() !== 0 || process.env.FENCEKIT_DOCKER_EXEC === '1') return undefined;
  // A container of another engine is not a process of this kernel (even when that engine runs here, its pids are
  // not ours to judge): `docker exec` through the engine.
  if (dockerEngine().remote) return undefined;
  try {
    execFileSync('nsenter', ['--version'], { stdio: 'ignore', timeout: 5000 });
    const pid = execFileSync('docker', ['inspect', '-f', '{{.State.Pid}}', containerId], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    const value = Number(pid.trim());
    return value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}
