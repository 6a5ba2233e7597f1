import { existsSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Removes cluster dirs whose owning process is gone (it was SIGKILLed, so no exit handler ran; its servers died
 * with it through the pdeathsig launcher). Dirs of live processes, other users' included, are left alone.
 */
export function sweepStaleDirs(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = /^fencekit-[a-z-]+-(\d+)-\w+$/.exec(name)?.[1];
    if (owner === undefined || Number(owner) === process.pid) continue;
    try {
      process.kill(Number(owner), 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH')
        rmSync(join(base, name), { recursive: true, force: true });
    }
  }
}

/** tmpfs when there is one: etcd and ZooKeeper fsync, and the disk is shared with everyone's tests. */
export function baseDir(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}
