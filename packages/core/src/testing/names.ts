/**
 * Names no backend can store faithfully or print safely: lone UTF-16 surrogates (not encodable as
 * UTF-8: etcd and ZooKeeper key encoding threw a raw `URIError`, Redis stored U+FFFD) and control
 * characters a terminal acts on (C0, DEL, C1). Every backend must refuse them up front with
 * `InvalidArgumentError`, before anything is sent.
 */
export const HOSTILE_NAME_SUFFIXES: readonly (readonly [string, string])[] = [
  ['a lone high surrogate', 'high-\uD800'],
  ['a lone low surrogate', '\uDC00-low'],
  ['a reversed surrogate pair', 'pair-\uDC00\uD800'],
  ['ESC (C0)', 'esc-\u001b[31m'],
  ['DEL', 'del-\u007f'],
  ['CSI (C1)', 'csi-\u009b31m'],
];

/** A name every backend must accept: astral characters (a valid surrogate pair) and accents. */
export const WELL_FORMED_NAME_SUFFIX = 'lock-\u{1F512}-é';
