import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteTimeoutError, SshConnectionError } from '../src/errors.js';
import { SshSession, type SshSessionOptions } from '../src/ssh/session.js';
import {
  ensureSshImage,
  makeKey,
  type SshNode,
  sshNodesUnavailable,
  startSshNode,
} from './support/ssh-node.js';

const run = promisify(execFile);

/**
 * The ssh transport of the ssh provider (issue #18) against a real sshd: a container of the project's image with
 * sshd, a key made for this run. One master connection per node, reused by every command; batch mode (no prompt);
 * every command bounded on the node and here; close leaves no ssh process or socket.
 */
const unavailable = await sshNodesUnavailable();
if (unavailable) console.warn(`[cluster] ssh tests SKIPPED: ${unavailable}`);

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(unavailable !== undefined)(
  `ssh sessions${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    // Short: the control socket's path must fit a unix socket address.
    const dir = mkdtempSync('/tmp/fk-ssh-');
    let node: SshNode;
    let options: SshSessionOptions;
    beforeAll(async () => {
      const image = await ensureSshImage();
      node = await startSshNode(image, dir, await makeKey(dir, 'client'));
      options = {
        controlDir: dir,
        hostKeys: 'accept-new',
        knownHostsFile: `${dir}/known_hosts`,
        connectTimeoutMs: 10_000,
      };
    }, 6 * 60_000);
    afterAll(async () => {
      await node?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('runs commands over one reused connection, with exit codes, output and input', async () => {
      const session = await openWhenServing(node, options);
      try {
        expect(await session.masterRunning()).toBe(true);
        expect((await session.run('echo hello; echo oops >&2; exit 7')).exitCode).toBe(7);
        expect(await session.check('echo "$((6 * 7))"')).toBe('42\n');
        await session.check('cat > /tmp/fencekit-config', {
          input: "a 'quoted' line\n$HOME stays literal\n",
        });
        expect(await session.check('cat /tmp/fencekit-config')).toBe(
          "a 'quoted' line\n$HOME stays literal\n",
        );
        // Binary-safe, as copying the clock shim to a node needs.
        const blob = randomBytes(64 * 1024);
        const sum = await session.check('cat > /tmp/fencekit-blob && sha256sum /tmp/fencekit-blob', {
          input: blob,
        });
        expect(sum.split(' ')[0]).toBe(createHash('sha256').update(blob).digest('hex'));
        await expect(session.check('false', { what: 'the false command' })).rejects.toThrow(
          /the false command on .*exit 1/,
        );
        // Every command rode the master: sshd accepted one login for all of them.
        const { stdout, stderr } = await run('docker', ['logs', node.containerId], { timeout: 20_000 });
        expect(`${stdout}${stderr}`.match(/Accepted publickey/g)?.length).toBe(1);
      } finally {
        await session.close();
      }
    });

    it('a command past its bound is killed on the node and reported as a timeout', async () => {
      const session = await openWhenServing(node, options);
      try {
        const error = await session.run('sleep 37', { timeoutMs: 1_000 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RemoteTimeoutError);
        // Nothing of it is left running there.
        const left = await session.run('pgrep -x sleep || true');
        expect(left.stdout.trim()).toBe('');
      } finally {
        await session.close();
      }
    });

    it('a key the node does not accept fails at once, never prompting', async () => {
      const stranger = await makeKey(dir, 'stranger');
      const error = await SshSession.open(
        { host: '127.0.0.1', port: node.port, user: 'root', keyFile: stranger },
        options,
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SshConnectionError);
      expect((error as Error).message).toMatch(/Permission denied/);
    });

    it('close ends the master, removes its socket, and is idempotent', async () => {
      const session = await openWhenServing(node, options);
      const pid = session.masterPid;
      expect(alive(pid)).toBe(true);
      await session.close();
      await session.close();
      expect(alive(pid)).toBe(false);
      expect(readdirSync(dir).filter((f) => /^[0-9a-f]{40}$/.test(f))).toEqual([]);
      await expect(session.run('true')).rejects.toBeInstanceOf(SshConnectionError);
    });

    it('the master dies with its owner even when the owner is SIGKILLed (no exit handler runs)', async () => {
      // Serving first, so the child's one try to connect does not meet an sshd still starting.
      await (await openWhenServing(node, options)).close();
      const dist = new URL('../dist/ssh/session.js', import.meta.url).href;
      const target = { host: '127.0.0.1', port: node.port, user: 'root', keyFile: node.keyFile };
      const owner = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { SshSession } = await import(${JSON.stringify(dist)});
const s = await SshSession.open(${JSON.stringify(target)}, ${JSON.stringify(options)});
console.log(s.masterPid); setInterval(() => {}, 1000);`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const [line] = (await once(createInterface({ input: owner.stdout! }), 'line')) as [string];
      const pid = Number(line);
      expect(alive(pid)).toBe(true);
      owner.kill('SIGKILL');
      await once(owner, 'exit');
      // The kernel's death signal is immediate; the bound only guards a loaded machine.
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(alive(pid)).toBe(false);
    }, 60_000);

    it('refuses a target that is not a plain host, user, port and existing key', async () => {
      for (const target of [
        { host: 'root@h' },
        { host: 'h', port: 0 },
        { host: 'h', user: 'a b' },
        { host: 'h', keyFile: `${dir}/missing` },
      ]) {
        await expect(SshSession.open(target, options)).rejects.toThrow(/ssh (host|port|user|key)/);
      }
      expect(existsSync(`${dir}/missing`)).toBe(false);
    });
  },
);

/** sshd may take a moment after `docker start`: a refused first try is retried, bounded. */
async function openWhenServing(node: SshNode, options: SshSessionOptions): Promise<SshSession> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await SshSession.open(
        { host: '127.0.0.1', port: node.port, user: 'root', keyFile: node.keyFile },
        options,
      );
    } catch (error) {
      if (!(error instanceof SshConnectionError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
