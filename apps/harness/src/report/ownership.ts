import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { notOwnFile, writeOwnFile } from './safe-write.js';
import type { Warn } from './warnings.js';

/**
 * Every page fencekit writes carries this in its head. A page is only ever overwritten when it carries
 * it: `fencekit check <dir>` refreshes `<dir>/../index.html`, which may be anyone's.
 */
export const FENCEKIT_PAGE_MARK = '<meta name="generator" content="fencekit">';

/** How every page fencekit writes begins, its policy in between (`page` in html.ts writes it). */
export function pageHead(escapedCsp: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapedCsp}">
${FENCEKIT_PAGE_MARK}
`;
}

/**
 * A page is fencekit's only if it begins exactly as `pageHead` writes one (any policy): the mark or a
 * fencekit title merely appearing in the first bytes (a page that quotes them) is not enough. Pages from
 * before the mark existed (titled "fencekit: …", unmarked) are no longer recognised: such an index is
 * left alone with a warning, and `fencekit report` writes a marked one once it is removed.
 */
const [HEAD_BEFORE_CSP, HEAD_AFTER_CSP] = pageHead('\0').split('\0') as [string, string];
function isOwnHead(text: string): boolean {
  if (!text.startsWith(HEAD_BEFORE_CSP)) return false;
  const end = text.indexOf(HEAD_AFTER_CSP, HEAD_BEFORE_CSP.length);
  // The policy is one escaped attribute value: no quote, markup or line inside it.
  return end !== -1 && !/["<>\n]/.test(text.slice(HEAD_BEFORE_CSP.length, end));
}
/** The head fencekit writes fits well within these bytes. */
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
  if (isOwnHead(text)) return { state: 'ours' };
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
