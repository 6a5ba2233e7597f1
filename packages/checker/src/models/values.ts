import { HistoryShapeError } from '../history/errors.js';
import type { Operation } from '../history/types.js';

/**
 * A register value as a primitive that compares with `===`: numbers, strings, booleans and null stay
 * themselves; anything else (objects, arrays, bigints) becomes a canonical JSON string, so the search
 * interns states without a model hash.
 */
export type Scalar = number | string | boolean | null;

export function toScalar(value: unknown): Scalar {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return `${value}n`;
  return `\u0000${canonicalJson(value)}`;
}

/** JSON with object keys sorted, so equal values encode equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
    }
    return v;
  });
}

/** `[old, new]` of a cas op, or a typed error naming the op. */
export function casPair(op: Operation): [unknown, unknown] {
  const v = op.input;
  if (Array.isArray(v) && v.length === 2) return [v[0], v[1]];
  if (v !== null && typeof v === 'object' && 'from' in v && 'to' in v) return [v.from, v.to];
  throw new HistoryShapeError(
    `op ${op.id}`,
    `cas expects [old, new] or {from, to}, got ${JSON.stringify(v)}`,
  );
}

export function unsupported(model: string, op: Operation): never {
  throw new HistoryShapeError(`op ${op.id}`, `the ${model} model has no operation "${op.f}"`);
}
