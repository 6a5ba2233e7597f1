import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { observeLocalServer } from '../nemesis/client-probes.js';
import { exited, forkReady } from '../run/child.js';
import { RemoteLockClient } from './remote-lock.js';
import { type BackendFactory, type Deployment, type FaultDriver, UnsupportedFaultError } from './types.js';

/**
 * The embedded default: core's in-memory lock in a server process of the harness's own. No external
 * servers; supports the faults a single process can suffer (pause, kill).
 */
export const memoryBackend: BackendFactory = {
  name: 'memory',
  description: 'in-memory lock server process (core MemoryLockClient)',
  safeFences: true,
  // No proxy in front of it, so no suspend.
  faults: ['pause-client', 'pause-server', 'kill', 'stall-holder', 'flicker', 'hang-at-close'],
  defaultTtlMs: 400,
  nativeElection: false,
  async preflight() {},
  async deploy(): Promise<Deployment> {
    const dir = mkdtempSync(join(tmpdir(), 'fencekit-memory-'));
    const socketPath = join(dir, 'locks.sock');
    const start = () => forkReady('backends/memory-server.js', [socketPath], undefined, 10_000);
    let server: ChildProcess | undefined = await start();
    // The server process started last (kept after a kill), for the independent probes.
    let lastPid = server.pid;
    let paused = false;
    const unsupported = (fault: string) => async () => {
      throw new UnsupportedFaultError(fault, 'memory');
    };
    const faults: FaultDriver = {
      async pause() {
        server?.kill('SIGSTOP');
        paused = true;
      },
      async resume() {
        server?.kill('SIGCONT');
        paused = false;
      },
      async kill() {
        if (!server) return;
        const dying = server;
        server = undefined;
        dying.kill('SIGKILL');
        await exited(dying, 5_000);
        rmSync(socketPath, { force: true });
      },
      async restart() {
        if (!server) {
          server = await start();
          lastPid = server.pid;
        }
      },
      partition: unsupported('partition'),
      cutClients: unsupported('cut-clients'),
      toxic: unsupported('toxic'),
      latency: unsupported('latency'),
      clock: unsupported('clock'),
      async heal() {
        if (paused) await faults.resume('n1');
        if (!server) await faults.restart('n1');
      },
      // /proc and the server's socket, never the flags above (#20).
      observe: (query) =>
        observeLocalServer(query, () => ({ current: server?.pid, last: lastPid }), socketPath),
    };
    return {
      backend: 'memory',
      provider: 'local',
      endpoints: [socketPath],
      nodes: ['n1'],
      faults,
      async close() {
        const s = server;
        server = undefined;
        if (s) {
          s.kill('SIGCONT');
          s.kill('SIGTERM');
          await exited(s, 3_000);
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  async connect({ endpoints }) {
    const locks = await RemoteLockClient.connect(endpoints[0]!);
    return { locks, close: () => locks.close() };
  },
};
