import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real 3-member etcd on loopback, started from /usr/bin/etcd. Stand-in until @fencekit/cluster's
 * local provider lands; same shape as the part of `Cluster` these tests use.
 */
export interface LocalEtcd {
  endpoints: string[];
  nodes: { id: string; endpoint: string; pid: number | undefined }[];
  kill(id: string): Promise<void>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export async function startLocalEtcd(members = 3): Promise<LocalEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'fencekit-etcd-'));
  const specs = [];
  for (let i = 1; i <= members; i++) {
    specs.push({ id: `n${i}`, client: await freePort(), peer: await freePort() });
  }
  const initialCluster = specs.map((s) => `${s.id}=http://127.0.0.1:${s.peer}`).join(',');
  const token = `fk-${process.pid}-${Date.now()}`;
  const processes = new Map<string, ChildProcess>();
  for (const s of specs) {
    const child = spawn(
      '/usr/bin/etcd',
      [
        '--name',
        s.id,
        '--data-dir',
        join(dir, s.id),
        '--listen-client-urls',
        `http://127.0.0.1:${s.client}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${s.client}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${s.peer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${s.peer}`,
        '--initial-cluster',
        initialCluster,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        token,
        '--log-level',
        'error',
      ],
      { stdio: ['ignore', 'ignore', process.env.FK_ETCD_LOG ? 'inherit' : 'ignore'] },
    );
    processes.set(s.id, child);
  }
  const endpoints = specs.map((s) => `127.0.0.1:${s.client}`);
  const cluster: LocalEtcd = {
    endpoints,
    nodes: specs.map((s) => ({ id: s.id, endpoint: `127.0.0.1:${s.client}`, pid: processes.get(s.id)?.pid })),
    async kill(id) {
      const child = processes.get(id);
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async close() {
      await Promise.all([...processes.keys()].map((id) => this.kill(id)));
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitHealthy(endpoints);
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}

async function waitHealthy(endpoints: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const checks = await Promise.all(
      endpoints.map(async (e) => {
        try {
          const response = await fetch(`http://${e}/health`, { signal: AbortSignal.timeout(1000) });
          return response.ok && ((await response.json()) as { health?: string }).health === 'true';
        } catch {
          return false;
        }
      }),
    );
    if (checks.every(Boolean)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`etcd at ${endpoints.join(', ')} did not become healthy within 30 s`);
}
