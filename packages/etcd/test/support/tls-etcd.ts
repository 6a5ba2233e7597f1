import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Etcd3 } from 'etcd3';

/**
 * One etcd member serving clients over TLS only (certificates made here with openssl), for the TLS and
 * user/password tests: @fencekit/cluster starts plain-text members only.
 */
export interface TlsEtcd {
  endpoint: string;
  ca: Buffer;
  close(): Promise<void>;
}

const run = promisify(execFile);

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

async function makeCertificates(dir: string): Promise<void> {
  const at = (name: string) => join(dir, name);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=fencekit-test-ca',
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.crt'),
  ]);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    at('server.key'),
    '-out',
    at('server.csr'),
  ]);
  await writeFile(at('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  await run('openssl', [
    'x509',
    '-req',
    '-days',
    '1',
    '-in',
    at('server.csr'),
    '-CA',
    at('ca.crt'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-extfile',
    at('san.ext'),
    '-out',
    at('server.crt'),
  ]);
}

export async function startTlsEtcd(): Promise<TlsEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'fencekit-etcd-tls-'));
  let child: ChildProcess | undefined;
  const close = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await makeCertificates(dir);
    const [client, peer] = [await freePort(), await freePort()];
    child = spawn(
      '/usr/bin/etcd',
      [
        '--name=tls',
        `--data-dir=${join(dir, 'data')}`,
        `--listen-client-urls=https://127.0.0.1:${client}`,
        `--advertise-client-urls=https://127.0.0.1:${client}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=tls=http://127.0.0.1:${peer}`,
        `--cert-file=${join(dir, 'server.crt')}`,
        `--key-file=${join(dir, 'server.key')}`,
        '--log-level=error',
      ],
      { stdio: 'ignore' },
    );
    const ca = await readFile(join(dir, 'ca.crt'));
    const endpoint = `127.0.0.1:${client}`;
    await waitServing(endpoint, ca);
    return { endpoint, ca, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function waitServing(endpoint: string, ca: Buffer): Promise<void> {
  const probe = new Etcd3({ hosts: `https://${endpoint}`, credentials: { rootCertificate: ca } });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await probe
          .get('probe')
          .options({ deadline: Date.now() + 1_000 })
          .string();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    probe.close();
  }
}

/** Creates the root user and turns authentication on. */
export async function enableAuth(endpoint: string, ca: Buffer, password: string): Promise<void> {
  const admin = new Etcd3({ hosts: `https://${endpoint}`, credentials: { rootCertificate: ca } });
  try {
    await admin
      .role('root')
      .create()
      .catch(() => undefined);
    await admin.user('root').create(password);
    await admin.user('root').addRole('root');
    await admin.auth.authEnable();
  } finally {
    admin.close();
  }
}
