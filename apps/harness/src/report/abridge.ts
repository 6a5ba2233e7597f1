/**
 * How much of one stored value a page prints. results.json is capped in bytes, not in what it holds: a
 * 10 MB file can list 5 million processes in one violation, which the page once drew and printed whole
 * (an "Invalid string length" that took the whole site down). Past these, a page shows the first ones and
 * says how many more there are.
 */
export const PAGE_LIMITS = {
  /** Items of one array. */
  items: 20,
  /** Keys of one object. */
  keys: 40,
  /** Characters of one string. */
  characters: 2_000,
  /** Violations of one checker drawn on the timeline. */
  marks: 200,
  /** Findings of one checker listed. */
  findings: 50,
} as const;

/** The first `limit` of `list`, and how many more were left out. */
export function firstOf<T>(list: readonly T[], limit: number): { shown: readonly T[]; more: number } {
  return list.length > limit
    ? { shown: list.slice(0, limit), more: list.length - limit }
    : { shown: list, more: 0 };
}

export const andMore = (more: number) => `… and ${more} more`;

/**
 * A copy of a stored JSON value cut to `PAGE_LIMITS`: long arrays keep their first items and end with
 * "… and N more", objects their first keys (then a "…" key saying how many more), long strings their start.
 * The stored files' depth is checked when read (at most 64), so the recursion is bounded.
 */
export function abridge(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.length > PAGE_LIMITS.characters
      ? `${value.slice(0, PAGE_LIMITS.characters)}… (${value.length - PAGE_LIMITS.characters} more characters)`
      : value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const { shown, more } = firstOf(value, PAGE_LIMITS.items);
    const items = shown.map(abridge);
    return more > 0 ? [...items, andMore(more)] : items;
  }
  const { shown, more } = firstOf(Object.entries(value as Record<string, unknown>), PAGE_LIMITS.keys);
  const out: Record<string, unknown> = Object.fromEntries(shown.map(([k, v]) => [abridge(k), abridge(v)]));
  if (more > 0) out['…'] = `${more} more keys`;
  return out;
}
