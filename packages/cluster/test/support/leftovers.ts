import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Cluster } from '@fencekit/cluster';

/** Whether a pid is still a live (non-zombie) process. */
export function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/** What a cluster leaves behind if close() did not do its job: live pids, dirs, containers, networks. */
export interface Footprint {
  readonly pids: readonly number[];
  readonly dirs: readonly string[];
  readonly containers: readonly string[];
  readonly network: string | undefined;
}

export function footprint(cluster: Cluster): Footprint {
  const internals = cluster as unknown as { rootDir?: string; networkId?: string };
  return {
    pids: cluster.nodes.flatMap((n) => (n.pid === undefined ? [] : [n.pid])),
    dirs: internals.rootDir ? [internals.rootDir] : [],
    containers: cluster.nodes.flatMap((n) => (n.containerId ? [n.containerId] : [])),
    network: internals.networkId,
  };
}

/** The parts of a footprint still present. */
export function leftovers(print: Footprint): string[] {
  const left: string[] = [];
  for (const pid of print.pids) if (alive(pid)) left.push(`pid ${pid}`);
  for (const dir of print.dirs) if (existsSync(dir)) left.push(`dir ${dir}`);
  for (const id of print.containers) {
    const out = execFileSync('docker', ['ps', '-a', '-q', '--no-trunc', '--filter', `id=${id}`], {
      encoding: 'utf8',
    });
    if (out.trim()) left.push(`container ${id.slice(0, 12)}`);
  }
  if (print.network) {
    const out = execFileSync(
      'docker',
      ['network', 'ls', '-q', '--no-trunc', '--filter', `id=${print.network}`],
      {
        encoding: 'utf8',
      },
    );
    if (out.trim()) left.push(`network ${print.network.slice(0, 12)}`);
  }
  return left;
}
