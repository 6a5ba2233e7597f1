import { EdnMap, EdnSet, ednTypeText, isEdnAtom, Tagged } from './edn-types.js';

/**
 * A value as text for messages: JSON for JSON's own types, with bigints as their digits (JSON.stringify
 * throws on them), `undefined` as `undefined`, infinities and NaN as EDN writes them (`##Inf`, not
 * `null`); values of EDN types JSON lacks as EDN (`:a`, `\a`, `1.0`, `1/2`, `#{1 2}`, `{:a 1}`,
 * `#uuid "…"`), and a vector holding one as EDN too (`[:a nil]`), so `:a` and `"a"` never look alike.
 * Control characters come out escaped, as JSON escapes them.
 */
export function showValue(value: unknown): string {
  return writeValue(value, false) ?? String(value);
}

/**
 * `value` as text (undefined for `undefined`, functions and symbols). `canonical`: object keys, map
 * entries and set members sorted, so values equal under Clojure's `=` (or JSON's) write alike, and
 * values that differ never do.
 */
export function writeValue(value: unknown, canonical: boolean): string | undefined {
  return write(value, canonical, false);
}

function write(value: unknown, canonical: boolean, edn: boolean): string | undefined {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) return Number.isNaN(value) ? '##NaN' : value > 0 ? '##Inf' : '##-Inf';
      return JSON.stringify(value);
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return edn ? 'nil' : 'null';
      if (Array.isArray(value)) {
        if (edn || hasEdnType(value, 0))
          return `[${value.map((v) => write(v, canonical, true) ?? 'nil').join(' ')}]`;
        return `[${value.map((v) => write(v, canonical, false) ?? 'null').join(',')}]`;
      }
      const typed = ednTypeText(value, (v) => write(v, canonical, true) ?? 'nil', canonical);
      if (typed !== undefined) return typed;
      const members: string[] = [];
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (typeof v === 'function') continue;
        const text = write(v, canonical, edn);
        if (text !== undefined) members.push(`${JSON.stringify(k)}:${text}`);
      }
      if (canonical) members.sort();
      return `{${members.join(',')}}`;
    }
    default:
      return undefined;
  }
}

/** Whether an array holds a value of an EDN type (looked for a few levels down; deeper ones show as JSON would). */
function hasEdnType(items: readonly unknown[], depth: number): boolean {
  for (const item of items) {
    if (isEdnAtom(item) || item instanceof Tagged || item instanceof EdnSet || item instanceof EdnMap)
      return true;
    if (Array.isArray(item) && depth < 8 && hasEdnType(item, depth + 1)) return true;
  }
  return false;
}
