import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** A reports directory that cannot be used: exit 3 (bad input) before anything starts. */
export class OutputDirError extends Error {
  readonly code = 'bad-output-dir';
  constructor(
    readonly dir: string,
    readonly problem: string,
  ) {
    super(`--out ${dir}: ${problem}`);
  }
  override get name(): string {
    return 'OutputDirError';
  }
}

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? 'error';

/**
 * Makes sure `out` is a directory fencekit can write in, creating missing levels, before a run or a
 * suite starts anything. Each level is made by one plain mkdir: Node's recursive mkdir retries
 * forever where a parent exists but refuses children (`/proc/x` answers ENOENT to mkdir), which hung
 * `--out /proc/...`. Every step is one system call per path level, so the check is bounded.
 */
export function prepareOutputDir(out: string): string {
  const target = resolve(out);
  const missing: string[] = [];
  for (let at = target; ; at = dirname(at)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(at).isDirectory();
    } catch (error) {
      if (errno(error) !== 'ENOENT') throw new OutputDirError(out, `${at} cannot be used (${errno(error)})`);
      if (dirname(at) === at) throw new OutputDirError(out, 'no existing parent directory');
      missing.push(at);
      continue;
    }
    if (!isDirectory) throw new OutputDirError(out, `${at} is not a directory`);
    break;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (error) {
      if (errno(error) !== 'EEXIST') throw new OutputDirError(out, `cannot create ${dir} (${errno(error)})`);
    }
  }
  // Directories that exist may still refuse files (/proc, /sys, read-only mounts): one probe write.
  const probe = join(target, `.fencekit-write-test-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (error) {
    throw new OutputDirError(out, `cannot write in it (${errno(error)})`);
  }
  return target;
}
