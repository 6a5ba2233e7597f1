import { readFileSync } from 'node:fs';

/** The state letter of process `pid` from /proc (R, S, D, T, Z…), or undefined when there is no such process. */
export function processState(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) || undefined;
  } catch {
    return undefined;
  }
}
