import assert from 'node:assert/strict';
import { inspect } from 'node:util';

/**
 * Every way an error reaches a reader, joined: `String()`, `util.inspect` in full (hidden fields,
 * any depth), `JSON.stringify`, the stack, for the error and each error down its `cause` chain (and
 * `AggregateError.errors`; each item of an array). A secret absent from this is absent from logs, reports and results.
 */
export function renderEverywhere(error: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): void => {
    if (depth > 10 || seen.has(value)) return;
    seen.add(value);
    parts.push(String(value), inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true }));
    try {
      parts.push(JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? String(v) : v)) ?? '');
    } catch {
      // A cyclic value cannot be written as JSON at all, so it cannot leak that way either.
    }
    if (Array.isArray(value)) for (const item of value) visit(item, depth + 1);
    if (value instanceof Error) {
      parts.push(String(value.stack));
      if ('cause' in value) visit(value.cause, depth + 1);
      const errors = (value as { errors?: unknown }).errors;
      if (Array.isArray(errors)) for (const e of errors) visit(e, depth + 1);
    }
  };
  visit(error, 0);
  return parts.join('\n');
}

/** Fails naming the secret and where it showed when any rendering of `error` contains one of `secrets`. */
export function assertNoSecret(error: unknown, secrets: readonly string[], what: string): void {
  const text = renderEverywhere(error);
  for (const secret of secrets) {
    const at = text.indexOf(secret);
    if (at >= 0) {
      const around = text.slice(Math.max(0, at - 120), at + secret.length + 40);
      assert.fail(`${what}: the secret "${secret}" shows in the error: …${around}…`);
    }
  }
}
