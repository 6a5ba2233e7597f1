/**
 * Key layout: every waiter for a resource owns `<prefix>/<kind>/<resource>/<lease id in hex>`. The
 * resource is URI-encoded so that one resource's key range never contains another's
 * (`a` vs `a/b`). Ordering is by create revision, never by key name.
 */
export function queuePrefix(prefix: string, kind: 'locks' | 'elections', name: string): string {
  return `${prefix}/${kind}/${encodeURIComponent(name)}/`;
}

export function waiterKey(queue: string, leaseIdHex: string): string {
  return queue + leaseIdHex;
}

/** A session's join mark (see queue.ts `JoinMark`): outside every queue, one per session lease. */
export function joinMarkKey(prefix: string, leaseIdHex: string): string {
  return `${prefix}/joins/${leaseIdHex}`;
}

/**
 * `rangeEnd` for a queue prefix, on the string: queue prefixes end in `/` (ASCII), so the end is the
 * same prefix ending in `0`, encoded once instead of encoded and then copied. Other strings take the
 * byte path.
 */
export function prefixEnd(queue: string): Buffer {
  const last = queue.charCodeAt(queue.length - 1);
  if (last >= 0x7f || Number.isNaN(last)) return rangeEnd(Buffer.from(queue, 'utf8'));
  return Buffer.from(queue.slice(0, -1) + String.fromCharCode(last + 1), 'utf8');
}

/** The exclusive end of the key range holding every key that starts with `prefix`. */
export function rangeEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    const byte = end[i] as number;
    if (byte < 0xff) {
      end[i] = byte + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** etcd lease ids arrive as decimal strings (int64); keys use their hex form like etcd's Go client. */
export function leaseIdHex(id: string): string {
  return BigInt(id).toString(16);
}
