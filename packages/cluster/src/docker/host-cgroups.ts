import { existsSync, readFileSync } from 'node:fs';

const CGROUP_ROOT = '/sys/fs/cgroup';

/**
 * The host-side `cgroup.procs` files of every cgroup process `pid` belongs to (cgroup v1 hierarchies, the v1
 * "unified" mount, or pure v2), for a process that must join them. Entries whose directory is not mounted where
 * expected are left out.
 */
export function cgroupProcsFiles(pid: number): string[] {
  const files: string[] = [];
  for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const [, controllers, path] = match as unknown as [string, string, string];
    const mounts =
      controllers === ''
        ? [`${CGROUP_ROOT}/unified`, CGROUP_ROOT] // v2 beside v1 (hybrid), or v2 alone
        : [
            `${CGROUP_ROOT}/${controllers.replace(/^name=/, '')}`,
            `${CGROUP_ROOT}/${controllers.split(',')[0]}`,
          ];
    const file = mounts.map((m) => `${m}${path}/cgroup.procs`).find((f) => existsSync(f));
    if (file && !files.includes(file)) files.push(file);
  }
  return files;
}

/** The nice level of process `pid` (field 19 of /proc/<pid>/stat, counted after the command name). */
export function niceLevel(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[16]);
}
