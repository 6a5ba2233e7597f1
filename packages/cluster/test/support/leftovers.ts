import { readdirSync, readFileSync } from 'node:fs';

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

/** Entries still under `dir` whose name starts with `prefix`. */
export function dirsLeft(dir: string, prefix: string): string[] {
  try {
    return readdirSync(dir).filter((name) => name.startsWith(prefix));
  } catch {
    return [];
  }
}
