import { randomUUID } from 'node:crypto';

/**
 * Where recipes keep their nodes, and how queue entries are named. An entry is
 * `_c_<owner>-<kind>-<sequence>`: the owner part is unique per attempt (Curator's "protected" mode), so
 * a create whose reply was lost is found again by listing the parent; the 10-digit sequence that
 * ZooKeeper appends orders the queue.
 */

/** One path segment for a resource or election name: any printable string, escaped for ZooKeeper. */
export function segmentFor(name: string): string {
  // encodeURIComponent escapes '/' and every non-ASCII character; '.' is escaped too so that the
  // names "." and ".." (invalid segments in ZooKeeper) cannot arise.
  return encodeURIComponent(name).replace(/\./g, '%2E');
}

export function newOwner(): string {
  return randomUUID();
}

export function entryPrefix(owner: string, kind: string): string {
  return `_c_${owner}-${kind}-`;
}

/** The sequence number ZooKeeper appended to an entry's name, or -1 if it is not one of ours. */
export function sequenceOf(child: string): number {
  if (!child.startsWith('_c_')) return -1;
  const digits = child.slice(-10);
  return /^\d{10}$/.test(digits) ? Number(digits) : -1;
}

/** Our entries in queue order (lowest sequence first); anything else in the folder is ignored. */
export function queueOrder(children: readonly string[]): string[] {
  return children
    .map((child) => ({ child, seq: sequenceOf(child) }))
    .filter((entry) => entry.seq >= 0)
    .sort((a, b) => a.seq - b.seq)
    .map((entry) => entry.child);
}
