import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway redis-server on a free loopback port, for tests that need a server set up in a way
 * @fencekit/cluster does not (a replica, TLS). No persistence; `stop()` kills it and removes its
 * directory.
 */
export interface LocalRedis {
  readonly port: number;
  readonly endpoint: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** A certificate and key (PEM files) to serve TLS with; the plain port is then closed. */
export interface ServerTls {
  readonly certFile: string;
  readonly keyFile: string;
}

export async function startRedis(extraArgs: string[] = [], tls?: ServerTls): Promise<LocalRedis> {
  for (let tries = 0; ; tries++) {
    try {
      return await startOnce(extraArgs, tls);
    } catch (error) {
      // Another process may grab the port between probing and binding: try another one.
      if (tries >= 4) throw error;
    }
  }
}

async function startOnce(extraArgs: string[], tls: ServerTls | undefined): Promise<LocalRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'fencekit-redis-'));
  const listen =
    tls === undefined
      ? ['--port', String(port)]
      : [
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          // Clients prove the server, not themselves (as with a managed Redis that has a password).
          '--tls-auth-clients',
          'no',
        ];
  const child = spawn(
    '/usr/bin/redis-server',
    [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
    { stdio: 'ignore' },
  );
  const stop = async (): Promise<void> => {
    await kill(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, child, 10_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, endpoint: `127.0.0.1:${port}`, pid: child.pid ?? -1, stop };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    if (await canConnect(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
    socket.connect(port, '127.0.0.1');
  });
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
