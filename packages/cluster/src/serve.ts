import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Cluster } from './types.js';

/**
 * Keeps `cluster` up for a parent process and closes it when the parent is done: on SIGTERM, or when
 * stdin ends (the parent exited or closed the pipe, even if it was SIGKILLed). Writes `describe(cluster)`
 * as one JSON line on stdout once the cluster is up, for the parent to read its endpoints from.
 *
 * Benchmarks run their cluster this way, in a process of its own: the local provider relays the servers'
 * peer links through proxies in the process that started the cluster, and sharing that event loop with
 * the measured clients would slow the cluster's own quorum traffic whenever the clients work.
 */
export async function serveClusterToParent(
  cluster: Cluster,
  describe: (cluster: Cluster) => unknown | Promise<unknown>,
): Promise<void> {
  let closing = false;
  const stop = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    try {
      await cluster.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify(await describe(cluster))}\n`);
}

/** What a served cluster described of itself, and how to stop it. */
export type ServedCluster<T> = T & { close(): Promise<void> };

/**
 * The parent side of `serveClusterToParent`: runs `script` (a module that starts a cluster and serves it)
 * in a child process and resolves with the description it prints. Bounded: a child that exits before
 * printing, or prints nothing within `timeoutMs`, fails the start and is stopped. `close()` ends the
 * child's stdin, which closes its cluster, and waits for it to exit.
 */
export async function startServedCluster<T>(script: URL, timeoutMs = 120_000): Promise<ServedCluster<T>> {
  const child = spawn(process.execPath, [fileURLToPath(script)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const close = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    await exited;
  };
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  try {
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => String(line)),
      exited.then(() => {
        throw new Error(`${script.pathname} exited before describing its cluster (code ${child.exitCode})`);
      }),
    ]);
    return { ...(JSON.parse(first) as T), close };
  } catch (error) {
    await close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
