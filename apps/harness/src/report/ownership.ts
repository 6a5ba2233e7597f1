import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { notOwnFile, writeOwnFile } from './safe-write.js';
import type { Warn } from './warnings.js';

/**
 * Every page fencekit writes carries this in its head. A page is only ever overwritten when it carries
 * it: `fencekit check <dir>` refreshes `<dir>/../index.html`, which may be anyone's.
 */
export const FENCEKIT_PAGE_MARK = '<meta name="generator" content="fencekit">';
/** Pages written before the mark existed began with these titles. */
const LEGACY_TITLES = ['<title>fencekit consistency report</title>', '<title>fencekit: '];
/** The mark sits in the head, within the first bytes. */
const HEAD_BYTES = 4096;

/** Whether a file at `path` is a page fencekit wrote; `problem` says why not. */
export function pageOwner(
  path: string,
): { state: 'absent' } | { state: 'ours' } | { state: 'foreign'; problem: string } {
  try {
    lstatSync(path);
  } catch {
    return { state: 'absent' };
  }
  // fencekit writes regular files of one name only: a link may point anywhere, a FIFO would block the read.
  const notOwn = notOwnFile(path);
  if (notOwn !== undefined) return { state: 'foreign', problem: `${notOwn}: not a page fencekit wrote` };
  const head = Buffer.alloc(HEAD_BYTES);
  let read: number;
  try {
    // Neither followed nor waited on, should a link or a FIFO have been swapped in since the check.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      if (!fstatSync(fd).isFile()) throw new Error('not a regular file');
      read = readSync(fd, head, 0, HEAD_BYTES, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return { state: 'foreign', problem: 'not a regular file: not a page fencekit wrote' };
  }
  const text = head.subarray(0, read).toString('utf8');
  if (text.includes(FENCEKIT_PAGE_MARK) || LEGACY_TITLES.some((t) => text.includes(t)))
    return { state: 'ours' };
  return { state: 'foreign', problem: 'not a page fencekit wrote (no fencekit mark): not overwritten' };
}

/**
 * Writes a page unless a file there is not fencekit's (said through `warn`, and left as it is).
 * `mayCreate`: whether an absent page may be created (a run's own site may; the directory above a
 * re-checked run, which may be anyone's, may not).
 */
export function writeOwnPage(path: string, html: string, mayCreate: boolean, warn: Warn): boolean {
  const owner = pageOwner(path);
  if (owner.state === 'foreign') {
    warn({ kind: 'foreign-page', file: path, problem: owner.problem });
    return false;
  }
  if (owner.state === 'absent' && !mayCreate) return false;
  writeOwnFile(path, html);
  return true;
}
