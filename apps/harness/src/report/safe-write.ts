import { lstatSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A file fencekit would write over is not one it made: nothing is written. */
export class UnsafeWriteError extends Error {
  readonly code = 'unsafe-write';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}: not written`);
  }
  override get name(): string {
    return 'UnsafeWriteError';
  }
}

/** Why the file at `path` must not be replaced, or undefined when it is absent or a plain file of its own. */
export function notOwnFile(path: string): string | undefined {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return undefined;
  }
  if (stat.isSymbolicLink()) return 'a symbolic link (fencekit writes no file through a link)';
  if (!stat.isFile()) return 'not a regular file';
  // Another name for the same file may be anyone's: fencekit's own files have one name.
  if (stat.nlink > 1) return `a file with ${stat.nlink} names (hard-linked)`;
  return undefined;
}

/**
 * Writes `data` to `path` as a new file: written beside it under a fresh name, then renamed over it. A rename
 * replaces the directory entry, never what a link pointed to, so a link planted at `path` between the check
 * and the write is replaced rather than written through; a symbolic link or hard-linked file already there
 * is refused (`UnsafeWriteError`) rather than silently cut loose.
 */
export function writeOwnFile(path: string, data: string): void {
  const problem = notOwnFile(path);
  if (problem !== undefined) throw new UnsafeWriteError(path, problem);
  const temporary = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`,
  );
  // 'wx': never opens an existing file (or a link) under the temporary name.
  writeFileSync(temporary, data, { flag: 'wx' });
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
