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
 * Makes sure `out` is a directory fencekit can write in, before a run or a suite starts anything. Only the
 * last level is created (as `mkdir` without `-p`): its parent must exist, so a mistyped `--out` fails at
 * once rather than growing a tree of directories from the first level that existed (even at `/`). One
 * plain mkdir, never Node's recursive one, which retries forever where a parent exists but refuses
 * children (`/proc/x` answers ENOENT to mkdir) and hung `--out /proc/...`.
 * `create: false` (`fencekit report`): the directory must exist already; nothing is created.
 */
export function prepareOutputDir(out: string, options: { create?: boolean } = {}): string {
  const target = resolve(out);
  const kind = (at: string): 'directory' | 'other' | 'missing' => {
    try {
      return statSync(at).isDirectory() ? 'directory' : 'other';
    } catch (error) {
      if (errno(error) !== 'ENOENT') throw new OutputDirError(out, `${at} cannot be used (${errno(error)})`);
      return 'missing';
    }
  };
  const found = kind(target);
  if (found === 'other') throw new OutputDirError(out, `${target} is not a directory`);
  if (found === 'missing') {
    if (options.create === false) throw new OutputDirError(out, 'no such directory');
    const parent = dirname(target);
    const above = kind(parent);
    if (above === 'missing')
      throw new OutputDirError(out, `${parent} does not exist (only the last level is created)`);
    if (above === 'other') throw new OutputDirError(out, `${parent} is not a directory`);
    try {
      mkdirSync(target);
    } catch (error) {
      if (errno(error) !== 'EEXIST')
        throw new OutputDirError(out, `cannot create ${target} (${errno(error)})`);
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
