import { HistoryShapeError } from '../history/errors.js';
import { showValue } from '../history/show.js';
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

/** A `Scalar` as the value it stands for, written as JSON (bigints as their digits), for messages. */
export function describeScalar(scalar: Scalar): string {
  if (typeof scalar !== 'string') return JSON.stringify(scalar);
  const marker = scalar.charCodeAt(0);
  if (marker > 2 || Number.isNaN(marker)) return JSON.stringify(scalar);
  const body = scalar.slice(1);
  return marker === 2 ? JSON.stringify(body) : body;
}

/**
 * JSON with object keys sorted, so equal values encode equally. Integers are written exactly, a
 * bigint as its digits (so 5n and 5 encode alike, and 2^64 keeps every digit), infinities and NaN
 * as EDN writes them (`##Inf`, `##-Inf`, `##NaN`, never `null`); `undefined` members are left out as
 * JSON leaves them.
 */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      // JSON writes ##Inf, ##-Inf and ##NaN as null; EDN's own spelling keeps them apart (no JSON text has it).
      if (!Number.isFinite(value)) return Number.isNaN(value) ? '##NaN' : value > 0 ? '##Inf' : '##-Inf';
      return JSON.stringify(value);
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value))
        return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined && typeof v !== 'function')
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
    }
    default:
      return 'null';
  }
}

/** `[old, new]` of a cas op, or a typed error naming the op. */
export function casPair(op: Operation): [unknown, unknown] {
  const v = op.input;
  if (Array.isArray(v) && v.length === 2) return [v[0], v[1]];
  if (v !== null && typeof v === 'object' && 'from' in v && 'to' in v) return [v.from, v.to];
  throw new HistoryShapeError(`op ${op.id}`, `cas expects [old, new] or {from, to}, got ${showValue(v)}`);
}

export function unsupported(model: string, op: Operation): never {
  throw new HistoryShapeError(`op ${op.id}`, `the ${model} model has no operation "${op.f}"`);
}
