/**
 * How the shared recipes name their queue entries (`_c_<owner>-<kind>-<sequence>`, see `paths.ts`), so
 * that one listing says everything a waiter needs, with no read of any node's data:
 * - semaphore: `sem.<limit>.<permits>`: the semaphore's size as this client names it (a mismatch is
 *   refused) and how many permits the entry asks for;
 * - read-write lock: `read` or `write`.
 * Kinds hold no '-', so the owner (a UUID) and the sequence number still parse around them.
 */

const ENTRY = /^_c_[0-9a-f-]{36}-([a-z]+(?:\.\d+)*)-\d{10}$/;
const SEMAPHORE_KIND = /^sem\.(\d+)\.(\d+)$/;

export const READ_KIND = 'read';
export const WRITE_KIND = 'write';

export function semaphoreKind(limit: number, permits: number): string {
  return `sem.${limit}.${permits}`;
}

/** The kind of one of our entries, or undefined for anything else in the folder. */
export function kindOf(child: string): string | undefined {
  return ENTRY.exec(child)?.[1];
}

export function isWriter(child: string): boolean {
  return kindOf(child) === WRITE_KIND;
}

/** A semaphore entry's size and request, or undefined for anything else. */
export function permitsOf(child: string): { limit: number; permits: number } | undefined {
  const kind = kindOf(child);
  const match = kind === undefined ? null : SEMAPHORE_KIND.exec(kind);
  return match ? { limit: Number(match[1]), permits: Number(match[2]) } : undefined;
}

/** The first size other than `limit` that an entry in `children` names, if any. */
export function otherLimit(children: readonly string[], limit: number): number | undefined {
  for (const child of children) {
    const entry = permitsOf(child);
    if (entry && entry.limit !== limit) return entry.limit;
  }
  return undefined;
}

/** How many permits the entries in `children` hold (or, for the one waiting there, ask for). */
export function permitsIn(children: readonly string[]): number {
  let sum = 0;
  for (const child of children) sum += permitsOf(child)?.permits ?? 0;
  return sum;
}
