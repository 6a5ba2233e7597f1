import { EdnMap, EdnSet, isEdnAtom, Tagged } from '../history/edn-types.js';
import { HistoryShapeError } from '../history/errors.js';
import { showValue, writeValue } from '../history/show.js';
import type { Operation } from '../history/types.js';

/**
 * A register value as a primitive that compares with `===`: numbers, booleans, null and strings stay
 * themselves; integers past 2^53 (bigints) and anything else (objects, arrays) become strings behind
 * a marker character, so the search interns states without a model hash. A string that itself starts
 * with a marker gets one more, so no string ever equals an encoded bigint or object.
 */
export type Scalar = number | string | boolean | null;

const OBJECT = '\u0000';
const BIG = '\u0001';
const STRING = '\u0002';

export function toScalar(value: unknown): Scalar {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value.charCodeAt(0) <= 2 ? `${STRING}${value}` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint')
    return Number.isSafeInteger(Number(value)) ? Number(value) : `${BIG}${value}`;
  return `${OBJECT}${canonicalJson(value)}`;
}

/** A `Scalar` as the value it stands for, for messages: JSON (bigints as their digits), EDN types as EDN. */
export function describeScalar(scalar: Scalar): string {
  if (typeof scalar !== 'string') return JSON.stringify(scalar);
  const marker = scalar.charCodeAt(0);
  if (marker > 2 || Number.isNaN(marker)) return JSON.stringify(scalar);
  const body = scalar.slice(1);
  return marker === 2 ? JSON.stringify(body) : body;
}

/**
 * A value's canonical text, its identity in the models: JSON with object keys sorted, integers
 * exact (a bigint as its digits, so 5n and 5 encode alike), infinities and NaN as EDN writes them
 * (`##Inf`, never `null`), `undefined` members left out as JSON leaves them. Values of EDN types
 * JSON lacks (Jepsen histories) as EDN, map entries and set members sorted, so two values encode
 * alike exactly when Clojure's `=` holds: `:a` ≠ `"a"`, `1` ≠ `1.0`, `1/2` ≠ `0.5`, `#{1}` ≠ `[1]`,
 * `\a` ≠ `"a"`, `#uuid "…"` ≠ its string, `[1 2]` = `(1 2)`, `{:a 1 :b 2}` = `{:b 2 :a 1}`. The text
 * is readable (messages show it), in EDN for EDN types.
 */
export function canonicalJson(value: unknown): string {
  return writeValue(value, true) ?? 'null';
}

/**
 * Field `name` of a record value: a JSON object's own member, or an EDN map's keyword key `:name`
 * (`{:value 1, :fence 3}`); undefined when absent or when the value is no record.
 */
export function field(value: unknown, name: string): unknown {
  if (value instanceof EdnMap) return value.get(name);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if (value instanceof Tagged || value instanceof EdnSet || isEdnAtom(value)) return undefined;
  return Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
}

/** `[old, new]` of a cas op, or a typed error naming the op. */
export function casPair(op: Operation): [unknown, unknown] {
  const v = op.input;
  if (Array.isArray(v) && v.length === 2) return [v[0], v[1]];
  const from = field(v, 'from');
  const to = field(v, 'to');
  if (from !== undefined && to !== undefined) return [from, to];
  throw new HistoryShapeError(`op ${op.id}`, `cas expects [old, new] or {from, to}, got ${showValue(v)}`);
}

export function unsupported(model: string, op: Operation): never {
  throw new HistoryShapeError(`op ${op.id}`, `the ${model} model has no operation "${op.f}"`);
}
