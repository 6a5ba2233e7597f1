import { closeSync, lstatSync, openSync, readSync, writeFileSync } from 'node:fs';
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
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return { state: 'absent' };
  }
  // fencekit writes regular files only: a link may point anywhere, a FIFO would block the read.
  if (!stat.isFile()) return { state: 'foreign', problem: 'not a regular file: not a page fencekit wrote' };
  const head = Buffer.alloc(HEAD_BYTES);
  const fd = openSync(path, 'r');
  let read: number;
  try {
    read = readSync(fd, head, 0, HEAD_BYTES, 0);
  } finally {
    closeSync(fd);
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
  writeFileSync(path, html);
  return true;
}
