import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the ssh provider makes its control dirs (short: a unix socket path must fit 108 bytes). */
export const CONTROL_BASE = '/tmp';
export const CONTROL_PREFIX = 'fk-ssh-';
const OWNER = 'owner';

/** Records this process as the dir's owner, so a later start can tell a dead run's dir from a live one's. */
export function writeControlOwner(dir: string): void {
  writeFileSync(join(dir, OWNER), `${process.pid}\n`);
}

function ownerGone(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, OWNER), 'utf8').trim());
  } catch {
    return false; // no owner recorded: not ours to judge (another tool, or a dir being made)
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Ends the masters left in control dirs whose owner process is gone (SIGKILLed: no exit handler ran, and a master
 * started without the pdeathsig launcher outlives it), each with `ssh -O exit` on its socket (5 s bound), and
 * removes those dirs. Dirs of live owners, and dirs with no owner recorded, are left alone. Returns the dirs removed.
 */
export function sweepStaleControlDirs(base = CONTROL_BASE): string[] {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith(CONTROL_PREFIX));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const dir = join(base, name);
    if (!ownerGone(dir)) continue;
    let sockets: string[] = [];
    try {
      sockets = readdirSync(dir).filter((n) => n !== OWNER);
    } catch {
      continue;
    }
    for (const socket of sockets) {
      // The host argument is required by ssh but unused: -O talks to the master behind the socket.
      spawnSync('ssh', ['-o', `ControlPath=${join(dir, socket)}`, '-O', 'exit', 'fencekit-stale-master'], {
        stdio: 'ignore',
        timeout: 5_000,
      });
    }
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
